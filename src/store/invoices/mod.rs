//! The `invoices` table: one invoice per billing period (the first included), per proration,
//! and a membership's final one. `billing_key` (`first`, `period:<start>`, `proration:<n>`,
//! `final`) is unique per membership, so a period can never be invoiced, and so charged, twice. The merchant's lists of invoices are
//! [`list`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use recur_domain::calendar::Period;
use recur_domain::coupon::AppliedCoupon;
use recur_domain::invoice::{InvoiceLine, InvoicePlan};
use recur_domain::status::InvoiceStatus;
use recur_domain::tax::InvoiceTax;
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::{from_micros, is_unique_violation, to_micros, Backend, Tx};

mod kind;
mod list;

pub use kind::InvoiceKind;
pub use list::{page, Filter, Listed};

/// How many invoices a membership record and a membership payload carry, newest first.
pub const RECENT_INVOICES: i64 = 10;

/// A stored invoice.
#[derive(Debug, Clone)]
pub struct Invoice {
    /// Internal id.
    pub id: i64,
    /// Owning merchant.
    pub merchant_id: i64,
    /// The membership it bills.
    pub membership_id: i64,
    /// Public key, `in_…`.
    pub invoice_key: String,
    /// `{prefix}-{YYYY}-{NNNNNN}` once finalized (its first payment attempt, or paid by credit
    /// when issued); `None` before.
    pub number: Option<String>,
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
    /// Taken off the subtotal before taxes.
    pub discount: i64,
    /// The coupon the discount came from.
    pub coupon: Option<AppliedCoupon>,
    /// Each rate's tax, as the rate was when invoiced.
    pub taxes: Vec<InvoiceTax>,
    /// `subtotal − discount + exclusive taxes`: what credit and the card settle.
    pub total: i64,
    /// EU rates were skipped (reverse charge).
    pub reverse_charge: bool,
    /// The cardholder disputed its payment with their bank (DESIGN §17).
    pub disputed: bool,
    /// Credit consumed.
    pub credit_applied: i64,
    /// Due from the payment method.
    pub amount_due: i64,
    /// Paid by the payment method.
    pub amount_paid: i64,
    /// Given back by succeeded refunds.
    pub amount_refunded: i64,
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

const COLUMNS: &str =
    "id, merchant_id, membership_id, invoice_key, number, kind, status, currency, period_start, \
    period_end, subtotal, credit_applied, amount_due, amount_paid, amount_refunded, lines, \
    created_at, paid_at, voided_at, discount, taxes, total, reverse_charge, coupon, disputed";

fn decode(row: &AnyRow) -> Result<Invoice, sqlx::Error> {
    decode_prefixed(row, "")
}

/// [`COLUMNS`] as `i.<column> AS i_<column>`, for a query that joins invoices `i` to a row of
/// another table whose column names they would clash with; decode with [`decode_joined`].
pub(super) static JOINED_COLUMNS: LazyLock<String> =
    LazyLock::new(|| super::qualified(COLUMNS, "i", Some(JOINED_PREFIX)));

const JOINED_PREFIX: &str = "i_";

/// The invoice in a row selected with [`JOINED_COLUMNS`]; `None` when an outer join found none.
pub(super) fn decode_joined(row: &AnyRow) -> Result<Option<Invoice>, sqlx::Error> {
    let id: Option<i64> = row.try_get(format!("{JOINED_PREFIX}id").as_str())?;
    if id.is_none() {
        return Ok(None);
    }
    decode_prefixed(row, JOINED_PREFIX).map(Some)
}

/// Decodes an invoice whose column names all carry `prefix`.
fn decode_prefixed(row: &AnyRow, prefix: &str) -> Result<Invoice, sqlx::Error> {
    let column = |name: &'static str| -> Cow<'static, str> {
        if prefix.is_empty() {
            Cow::Borrowed(name)
        } else {
            Cow::Owned(format!("{prefix}{name}"))
        }
    };
    let time = |name: Cow<str>| -> Result<Option<DateTime<Utc>>, sqlx::Error> {
        Ok(row.try_get::<Option<i64>, _>(&*name)?.map(from_micros))
    };
    let status: String = row.try_get(&*column("status"))?;
    let lines: String = row.try_get(&*column("lines"))?;
    let taxes: String = row.try_get(&*column("taxes"))?;
    let coupon: Option<String> = row.try_get(&*column("coupon"))?;
    Ok(Invoice {
        id: row.try_get(&*column("id"))?,
        merchant_id: row.try_get(&*column("merchant_id"))?,
        membership_id: row.try_get(&*column("membership_id"))?,
        invoice_key: row.try_get(&*column("invoice_key"))?,
        number: row.try_get(&*column("number"))?,
        kind: InvoiceKind::from_db(&row.try_get::<String, _>(&*column("kind"))?),
        status: InvoiceStatus::parse(&status)
            .ok_or_else(|| sqlx::Error::Decode(format!("unknown status {status}").into()))?,
        currency: row.try_get(&*column("currency"))?,
        period: match (time(column("period_start"))?, time(column("period_end"))?) {
            (Some(start), Some(end)) => Some(Period { start, end }),
            _ => None,
        },
        subtotal: row.try_get(&*column("subtotal"))?,
        discount: row.try_get(&*column("discount"))?,
        coupon: coupon
            .map(|c| serde_json::from_str(&c))
            .transpose()
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        taxes: serde_json::from_str(&taxes).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        total: row.try_get(&*column("total"))?,
        reverse_charge: row.try_get::<i64, _>(&*column("reverse_charge"))? == 1,
        disputed: row.try_get::<i64, _>(&*column("disputed"))? == 1,
        credit_applied: row.try_get(&*column("credit_applied"))?,
        amount_due: row.try_get(&*column("amount_due"))?,
        amount_paid: row.try_get(&*column("amount_paid"))?,
        amount_refunded: row.try_get(&*column("amount_refunded"))?,
        lines: serde_json::from_str(&lines).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        created_at: from_micros(row.try_get(&*column("created_at"))?),
        paid_at: time(column("paid_at"))?,
        voided_at: time(column("voided_at"))?,
    })
}

/// Stores an invoice. `None` when the membership already has one with this `billing_key`.
pub async fn insert(
    tx: &mut Tx,
    new: NewInvoice<'_>,
    now: DateTime<Utc>,
) -> Result<Option<Invoice>, sqlx::Error> {
    Ok(insert_many(tx, &[new], now).await?.pop())
}

/// Stores invoices in one statement and returns those stored: an invoice whose membership
/// already has its `billing_key` is left out.
pub async fn insert_many(
    tx: &mut Tx,
    new: &[NewInvoice<'_>],
    now: DateTime<Utc>,
) -> Result<Vec<Invoice>, sqlx::Error> {
    if new.is_empty() {
        return Ok(Vec::new());
    }
    // Credit is never a negative invoice (DESIGN §4): what is owed back is a credit note.
    debug_assert!(new.iter().all(|i| i.plan.total >= 0), "a negative invoice");
    let sql = format!(
        "INSERT INTO invoices (merchant_id, membership_id, invoice_key, billing_key, kind, status, \
         currency, period_start, period_end, subtotal, credit_applied, amount_due, amount_paid, \
         lines, created_at, paid_at, discount, taxes, total, reverse_charge, coupon) VALUES {} \
         ON CONFLICT (membership_id, billing_key) DO NOTHING RETURNING {COLUMNS}",
        super::placeholders(new.len(), 21, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for invoice in new {
        let lines = serde_json::to_string(&invoice.plan.lines)
            .map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
        let taxes = serde_json::to_string(&invoice.plan.taxes)
            .map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
        let coupon = invoice
            .plan
            .coupon
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
        let paid = invoice.status == InvoiceStatus::Paid;
        query = query
            .bind(invoice.merchant_id)
            .bind(invoice.membership_id)
            .bind(invoice.invoice_key.clone())
            .bind(invoice.billing_key.clone())
            .bind(invoice.kind.as_str())
            .bind(invoice.status.as_str())
            .bind(invoice.currency.to_string())
            .bind(invoice.period.map(|p| to_micros(p.start)))
            .bind(invoice.period.map(|p| to_micros(p.end)))
            .bind(invoice.plan.subtotal)
            .bind(invoice.plan.credit_applied)
            .bind(invoice.plan.amount_due)
            .bind(0_i64)
            .bind(lines)
            .bind(to_micros(now))
            .bind(paid.then(|| to_micros(now)))
            .bind(invoice.plan.discount)
            .bind(taxes)
            .bind(invoice.plan.total)
            .bind(i64::from(invoice.plan.reverse_charge))
            .bind(coupon);
    }
    match query.fetch_all(&mut **tx).await {
        Ok(rows) => rows.iter().map(decode).collect(),
        Err(error) if is_unique_violation(&error) => Ok(Vec::new()),
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

/// The invoices with these `(merchant id, id)` pairs, by id.
pub async fn get_many<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    ids: &[(i64, i64)],
) -> Result<HashMap<i64, Invoice>, sqlx::Error> {
    let rows = super::rows_by_ids(executor, "invoices", COLUMNS, ids).await?;
    rows.iter()
        .map(|row| decode(row).map(|invoice| (invoice.id, invoice)))
        .collect()
}

/// [`recent`] for many memberships in one query: each one's latest `limit` invoices, newest
/// first, by membership id.
pub async fn recent_many<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    membership_ids: &[i64],
    limit: i64,
) -> Result<HashMap<i64, Vec<Invoice>>, sqlx::Error> {
    if membership_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let sql = format!(
        "SELECT {COLUMNS} FROM (SELECT i.*, ROW_NUMBER() OVER \
         (PARTITION BY i.membership_id ORDER BY i.id DESC) AS newest \
         FROM invoices i WHERE i.membership_id IN (SELECT column1 FROM (VALUES {}) AS v)) AS r \
         WHERE r.newest <= $1 ORDER BY membership_id, id DESC",
        super::placeholders(membership_ids.len(), 1, 2)
    );
    let mut query = sqlx::query(&sql).bind(limit);
    for id in membership_ids {
        query = query.bind(*id);
    }
    let mut recent: HashMap<i64, Vec<Invoice>> = HashMap::new();
    for row in query.fetch_all(executor).await? {
        let invoice = decode(&row)?;
        recent
            .entry(invoice.membership_id)
            .or_default()
            .push(invoice);
    }
    Ok(recent)
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

/// The merchant's invoice `id`, locked for the rest of `tx` (PostgreSQL; SQLite's writer lock
/// serializes writers already).
pub async fn lock(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: i64,
    id: i64,
) -> Result<Option<Invoice>, sqlx::Error> {
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let sql = format!("SELECT {COLUMNS} FROM invoices WHERE merchant_id = $1 AND id = $2{lock}");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The invoice `invoice_key` of `merchant_id`, locked for the rest of the transaction (on
/// SQLite the write transaction holds the database lock already).
pub async fn lock_by_key(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: i64,
    invoice_key: &str,
) -> Result<Option<Invoice>, sqlx::Error> {
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let sql =
        format!("SELECT {COLUMNS} FROM invoices WHERE merchant_id = $1 AND invoice_key = $2{lock}");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(invoice_key)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Adds a succeeded refund's `amount` to the invoice's `amount_refunded`.
/// Marks the invoice `id` of the merchant disputed; `false` when it was already (nothing
/// changed).
pub async fn mark_disputed(tx: &mut Tx, merchant_id: i64, id: i64) -> Result<bool, sqlx::Error> {
    let changed = sqlx::query(
        "UPDATE invoices SET disputed = 1 WHERE id = $1 AND merchant_id = $2 AND disputed = 0",
    )
    .bind(id)
    .bind(merchant_id)
    .execute(&mut **tx)
    .await?;
    Ok(changed.rows_affected() == 1)
}

pub async fn add_refunded(tx: &mut Tx, id: i64, amount: i64) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE invoices SET amount_refunded = amount_refunded + $1 WHERE id = $2")
        .bind(amount)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(())
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
    mark_paid_many(tx, &[(id, amount_paid, period)], now).await
}

/// [`mark_paid`] for many `(invoice id, amount paid, period)` in one statement; a period of
/// `None` keeps the invoice's own.
pub async fn mark_paid_many(
    tx: &mut Tx,
    paid: &[(i64, i64, Option<Period>)],
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    if paid.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "UPDATE invoices SET status = 'Paid', amount_paid = v.column2, paid_at = $1, \
         period_start = COALESCE(v.column3, invoices.period_start), \
         period_end = COALESCE(v.column4, invoices.period_end) \
         FROM (VALUES {}) AS v WHERE invoices.id = v.column1",
        super::placeholders(paid.len(), 4, 2)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql).bind(to_micros(now));
    for (id, amount, period) in paid {
        query = query
            .bind(*id)
            .bind(*amount)
            .bind(period.map(|p| to_micros(p.start)))
            .bind(period.map(|p| to_micros(p.end)));
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

/// Fixes the period invoice `id` bills while it stays Open (a first invoice whose SEPA debit
/// was scheduled: the membership's first period starts then).
pub async fn set_period(tx: &mut Tx, id: i64, period: Period) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE invoices SET period_start = $2, period_end = $3 WHERE id = $1")
        .bind(id)
        .bind(to_micros(period.start))
        .bind(to_micros(period.end))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Opens invoice `id` again after the payment that paid it was reversed (a returned SEPA
/// debit): Open, nothing paid.
pub async fn reopen(tx: &mut Tx, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE invoices SET status = 'Open', amount_paid = 0, paid_at = NULL          WHERE id = $1 AND status = 'Paid'",
    )
    .bind(id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Gives each `(invoice id, number)` its number in one statement, unless it has one already;
/// returns how many were numbered.
pub async fn set_numbers(tx: &mut Tx, numbers: &[(i64, String)]) -> Result<u64, sqlx::Error> {
    if numbers.is_empty() {
        return Ok(0);
    }
    let sql = format!(
        "UPDATE invoices SET number = v.column2 FROM (VALUES {}) AS v \
         WHERE invoices.id = v.column1 AND invoices.number IS NULL",
        super::placeholders(numbers.len(), 2, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for (id, number) in numbers {
        query = query.bind(*id).bind(number.clone());
    }
    Ok(query.execute(&mut **tx).await?.rows_affected())
}

/// Voids one invoice unless it is already Paid; returns it when it was voided.
pub async fn void(tx: &mut Tx, id: i64, now: DateTime<Utc>) -> Result<Vec<Invoice>, sqlx::Error> {
    voiding(tx, "id = $2 AND status IN ('Draft', 'Open')", id, now).await
}

/// Voids the Draft or Open invoices of a canceled membership except its renewal invoices;
/// returns them. A renewal invoice is Open only when its collection failed (its charge was
/// declined, or could not be made): the transaction that settles a renewal's charge pays or
/// fails it, and a cancel waits for a charge in flight. Such an invoice stays Open, to be
/// collected by a pay-now checkout; a first invoice bills a period that never began, and is
/// voided whatever checkout cards were declined on it.
pub async fn void_open_except_renewals(
    tx: &mut Tx,
    membership_id: i64,
    now: DateTime<Utc>,
) -> Result<Vec<Invoice>, sqlx::Error> {
    let open = "membership_id = $2 AND status IN ('Draft', 'Open') AND kind <> 'renewal'";
    voiding(tx, open, membership_id, now).await
}

/// Voids every Draft or Open invoice of a membership; returns them.
pub async fn void_open(
    tx: &mut Tx,
    membership_id: i64,
    now: DateTime<Utc>,
) -> Result<Vec<Invoice>, sqlx::Error> {
    let open = "membership_id = $2 AND status IN ('Draft', 'Open')";
    voiding(tx, open, membership_id, now).await
}

/// Voids the invoices `condition` (on `$2` = `id`) selects, returning them.
async fn voiding(
    tx: &mut Tx,
    condition: &str,
    id: i64,
    now: DateTime<Utc>,
) -> Result<Vec<Invoice>, sqlx::Error> {
    let sql = format!(
        "UPDATE invoices SET status = 'Void', voided_at = $1 WHERE {condition} RETURNING {COLUMNS}"
    );
    let rows = sqlx::query(&sql)
        .bind(to_micros(now))
        .bind(id)
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(decode).collect()
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
