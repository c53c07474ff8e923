//! SEPA debits (DESIGN §18): the charges of mandates, each pre-notified for a collection date
//! and `Pending` until one collection file takes it. Taking debits into a batch is one
//! `UPDATE … WHERE batch_id IS NULL`, so a debit is in one batch only whatever runs
//! concurrently, on any number of instances. Every query is scoped by merchant id.

use std::collections::HashSet;

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{Any, Executor, Row};

use super::{to_micros, Tx};

/// The stored form of a collection date.
const DATE: &str = "%Y-%m-%d";

/// A debit to record for a charge of a mandate.
#[derive(Debug)]
pub struct NewDebit<'a> {
    /// The charge it collects.
    pub charge_id: i64,
    /// Owning merchant.
    pub merchant_id: i64,
    /// The SEPA processor collecting it.
    pub processor_id: i64,
    /// The mandate's payment method.
    pub payment_method_id: i64,
    /// When it is to be collected, as pre-notified.
    pub collection_date: NaiveDate,
    /// Its `EndToEndId` in the collection file, unique.
    pub end_to_end_id: &'a str,
}

/// A debit taken into a batch, with what its collection file line needs.
#[derive(Debug, Clone)]
pub struct Taken {
    /// The charge it collects.
    pub charge_id: i64,
    /// The mandate's payment method.
    pub payment_method_id: i64,
    /// `EndToEndId`.
    pub end_to_end_id: String,
    /// Amount, minor units (EUR cents).
    pub amount: i64,
    /// The invoice's number (its key until numbered), for the remittance information.
    pub invoice_number: String,
    /// `FRST` for the mandate's first collection, else `RCUR`.
    pub first: bool,
}

/// Records the debit of a charge of a mandate, with its pre-notification time `notified_at`;
/// `false` when the charge has one already (it was scheduled before).
pub async fn insert(
    tx: &mut Tx,
    new: &NewDebit<'_>,
    notified_at: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO sepa_debits (charge_id, merchant_id, processor_id, payment_method_id, \
         collection_date, end_to_end_id, notified_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT (charge_id) DO NOTHING",
    )
    .bind(new.charge_id)
    .bind(new.merchant_id)
    .bind(new.processor_id)
    .bind(new.payment_method_id)
    .bind(new.collection_date.format(DATE).to_string())
    .bind(new.end_to_end_id)
    .bind(to_micros(notified_at))
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The collection date of charge `charge_id`'s debit, when it has one.
pub async fn collection_date<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    charge_id: i64,
) -> Result<Option<NaiveDate>, sqlx::Error> {
    let date: Option<String> = sqlx::query_scalar(
        "SELECT collection_date FROM sepa_debits WHERE merchant_id = $1 AND charge_id = $2",
    )
    .bind(merchant_id)
    .bind(charge_id)
    .fetch_optional(executor)
    .await?;
    Ok(date.and_then(|d| NaiveDate::parse_from_str(&d, DATE).ok()))
}

/// Takes every debit of the merchant's SEPA processor that is due by `by`, still `Pending` and
/// in no batch, into batch `batch_id`; returns them in charge order with their sequence type
/// (`FRST` for a mandate none of whose debits was taken into an earlier batch, or whose only
/// earlier ones were returned `FRST` debits, for its first debit here).
pub async fn take_for_batch(
    tx: &mut Tx,
    merchant_id: i64,
    processor_id: i64,
    by: NaiveDate,
    batch_id: i64,
) -> Result<Vec<Taken>, sqlx::Error> {
    let taken: Vec<i64> = sqlx::query_scalar(
        "UPDATE sepa_debits SET batch_id = $4 WHERE merchant_id = $1 AND processor_id = $2 \
         AND batch_id IS NULL AND collection_date <= $3 \
         AND charge_id IN (SELECT id FROM charges WHERE merchant_id = $1 AND status = 'Pending') \
         RETURNING charge_id",
    )
    .bind(merchant_id)
    .bind(processor_id)
    .bind(by.format(DATE).to_string())
    .bind(batch_id)
    .fetch_all(&mut **tx)
    .await?;
    if taken.is_empty() {
        return Ok(Vec::new());
    }
    let rows = sqlx::query(
        "SELECT d.charge_id, d.payment_method_id, d.end_to_end_id, c.amount, \
         COALESCE(i.number, i.invoice_key) AS invoice_number, \
         EXISTS (SELECT 1 FROM sepa_debits e WHERE e.payment_method_id = d.payment_method_id \
                 AND e.batch_id IS NOT NULL AND e.batch_id <> d.batch_id \
                 AND (e.returned_at IS NULL OR e.sequence = 'RCUR')) AS collected_before \
         FROM sepa_debits d JOIN charges c ON c.id = d.charge_id \
         JOIN invoices i ON i.id = c.invoice_id \
         WHERE d.merchant_id = $1 AND d.batch_id = $2 ORDER BY d.charge_id",
    )
    .bind(merchant_id)
    .bind(batch_id)
    .fetch_all(&mut **tx)
    .await?;
    let mut seen = HashSet::new();
    let mut debits = Vec::with_capacity(rows.len());
    for row in rows {
        let payment_method_id: i64 = row.try_get("payment_method_id")?;
        let collected_before = row.try_get::<bool, _>("collected_before").or_else(|_| {
            row.try_get::<i64, _>("collected_before")
                .map(|flag| flag != 0)
        })?;
        let first = !collected_before && seen.insert(payment_method_id);
        debits.push(Taken {
            charge_id: row.try_get("charge_id")?,
            payment_method_id,
            end_to_end_id: row.try_get("end_to_end_id")?,
            amount: row.try_get("amount")?,
            invoice_number: row.try_get("invoice_number")?,
            first,
        });
    }
    for sequence in ["FRST", "RCUR"] {
        let ids: Vec<i64> = debits
            .iter()
            .filter(|d| d.first == (sequence == "FRST"))
            .map(|d| d.charge_id)
            .collect();
        if ids.is_empty() {
            continue;
        }
        let sql = format!(
            "UPDATE sepa_debits SET sequence = $1 WHERE batch_id = $2 AND charge_id IN ({})",
            super::params::placeholders(ids.len(), 1, 3)
        );
        let mut query = sqlx::query(&sql).bind(sequence).bind(batch_id);
        for id in &ids {
            query = query.bind(*id);
        }
        query.execute(&mut **tx).await?;
    }
    Ok(debits)
}

/// A batched debit whose collection date has come.
#[derive(Debug, Clone)]
pub struct Due {
    /// Owning merchant.
    pub merchant_id: i64,
    /// The charge it collects.
    pub charge_id: i64,
    /// Its `EndToEndId`: the payment's reference.
    pub end_to_end_id: String,
}

/// The batched debits not yet collected whose batch's collection date is on or before
/// `today`: of one merchant, or of all; at most `limit`, oldest first.
pub async fn due_for_collection<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: Option<i64>,
    today: NaiveDate,
    limit: i64,
) -> Result<Vec<Due>, sqlx::Error> {
    let rows: Vec<(i64, i64, String)> = sqlx::query_as(
        "SELECT d.merchant_id, d.charge_id, d.end_to_end_id FROM sepa_debits d \
         JOIN sepa_batches b ON b.id = d.batch_id \
         WHERE d.batch_id IS NOT NULL AND d.collected_at IS NULL AND d.returned_at IS NULL \
         AND ($1 = 0 OR d.merchant_id = $1) AND b.collection_date <= $2 \
         ORDER BY d.charge_id LIMIT $3",
    )
    .bind(merchant_id.unwrap_or(0))
    .bind(today.format(DATE).to_string())
    .bind(limit)
    .fetch_all(executor)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(merchant_id, charge_id, end_to_end_id)| Due {
            merchant_id,
            charge_id,
            end_to_end_id,
        })
        .collect())
}

/// Notes the debits of these charges collected at `at`.
pub async fn mark_collected(
    tx: &mut Tx,
    charge_ids: &[i64],
    at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    if charge_ids.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "UPDATE sepa_debits SET collected_at = $1 WHERE collected_at IS NULL \
         AND charge_id IN ({})",
        super::params::placeholders(charge_ids.len(), 1, 2)
    );
    let mut query = sqlx::query(&sql).bind(to_micros(at));
    for id in charge_ids {
        query = query.bind(*id);
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

/// A debit named in a bank's return file.
#[derive(Debug, Clone)]
pub struct Named {
    /// Its `EndToEndId`.
    pub end_to_end_id: String,
    /// The charge it collects.
    pub charge_id: i64,
    /// The mandate's payment method.
    pub payment_method_id: i64,
    /// Whether a return of it was applied already.
    pub returned: bool,
}

/// The merchant's debits with these `EndToEndId`s (unknown ones are left out).
pub async fn by_end_to_end_ids<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    ids: &[String],
) -> Result<Vec<Named>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT end_to_end_id, charge_id, payment_method_id, returned_at FROM sepa_debits \
         WHERE merchant_id = $1 AND end_to_end_id IN ({})",
        super::params::placeholders(ids.len(), 1, 2)
    );
    let mut query = sqlx::query(&sql).bind(merchant_id);
    for id in ids {
        query = query.bind(id);
    }
    let rows = query.fetch_all(executor).await?;
    rows.iter()
        .map(|row| {
            Ok(Named {
                end_to_end_id: row.try_get("end_to_end_id")?,
                charge_id: row.try_get("charge_id")?,
                payment_method_id: row.try_get("payment_method_id")?,
                returned: row.try_get::<Option<i64>, _>("returned_at")?.is_some(),
            })
        })
        .collect()
}

/// Notes the debit of charge `charge_id` returned with `code` at `at`; `false` when a return
/// of it was applied already (by a concurrent request).
pub async fn mark_returned(
    tx: &mut Tx,
    charge_id: i64,
    code: &str,
    at: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE sepa_debits SET returned_at = $2, return_code = $3 \
         WHERE charge_id = $1 AND returned_at IS NULL",
    )
    .bind(charge_id)
    .bind(to_micros(at))
    .bind(code)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}
