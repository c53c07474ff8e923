//! SEPA collection files (DESIGN §18): one batch per `POST /sepa/batches`, holding the
//! `pain.008` document as made (a download is the file the bank was given). Every query is
//! scoped by merchant id.

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::keyset::{self, Filters, Window};
use super::{from_micros, to_micros, Tx};

/// A stored collection file.
#[derive(Debug, Clone)]
pub struct Batch {
    /// Internal id.
    pub id: i64,
    /// `sb_…`.
    pub batch_key: String,
    /// The SEPA processor it collects for.
    pub processor_id: i64,
    /// `ReqdColltnDt`.
    pub collection_date: NaiveDate,
    /// `MsgId`.
    pub message_id: String,
    /// How many debits it holds.
    pub count: i64,
    /// Their sum, cents.
    pub total: i64,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "b.id, b.batch_key, b.processor_id, b.collection_date, b.message_id, \
                       b.debit_count, b.total, b.created_at";

fn decode(row: &AnyRow) -> Result<Batch, sqlx::Error> {
    let date: String = row.try_get("collection_date")?;
    Ok(Batch {
        id: row.try_get("id")?,
        batch_key: row.try_get("batch_key")?,
        processor_id: row.try_get("processor_id")?,
        collection_date: NaiveDate::parse_from_str(&date, "%Y-%m-%d")
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        message_id: row.try_get("message_id")?,
        count: row.try_get("debit_count")?,
        total: row.try_get("total")?,
        created_at: from_micros(row.try_get("created_at")?),
    })
}

/// Opens a batch (empty until [`finish`]) so that debits can be taken into it; its id.
pub async fn open(
    tx: &mut Tx,
    merchant_id: i64,
    processor_id: i64,
    batch_key: &str,
    collection_date: NaiveDate,
    message_id: &str,
    now: DateTime<Utc>,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO sepa_batches (batch_key, merchant_id, processor_id, collection_date, \
         message_id, debit_count, total, document, created_at) \
         VALUES ($1, $2, $3, $4, $5, 0, 0, '', $6) RETURNING id",
    )
    .bind(batch_key)
    .bind(merchant_id)
    .bind(processor_id)
    .bind(collection_date.format("%Y-%m-%d").to_string())
    .bind(message_id)
    .bind(to_micros(now))
    .fetch_one(&mut **tx)
    .await
}

/// Completes batch `id` with its debits' count and total and its document.
pub async fn finish(
    tx: &mut Tx,
    id: i64,
    count: i64,
    total: i64,
    document: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE sepa_batches SET debit_count = $2, total = $3, document = $4 WHERE id = $1",
    )
    .bind(id)
    .bind(count)
    .bind(total)
    .bind(document)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The merchant's batch `batch_key`.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    batch_key: &str,
) -> Result<Option<Batch>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM sepa_batches b WHERE b.merchant_id = $1 AND b.batch_key = $2"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(batch_key)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The document of the merchant's batch `batch_key`.
pub async fn document<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    batch_key: &str,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT document FROM sepa_batches WHERE merchant_id = $1 AND batch_key = $2",
    )
    .bind(merchant_id)
    .bind(batch_key)
    .fetch_optional(executor)
    .await
}

/// A page of the merchant's batches, newest first ([`keyset`]).
pub async fn page<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    window: Window,
) -> Result<Vec<Batch>, sqlx::Error> {
    let select = format!("SELECT {COLUMNS} FROM sepa_batches b");
    let rows = keyset::page(
        executor,
        &select,
        "b",
        merchant_id,
        &Filters::default(),
        window,
    )
    .await?;
    rows.iter().map(decode).collect()
}
