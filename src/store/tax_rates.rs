//! The `tax_rates` table (DESIGN §14): a merchant's rates, archivable, immutable once used.
//! Every query is scoped by merchant id.

use chrono::{DateTime, Utc};
use recur_domain::tax::{parse_percentage, TaxRate};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::keyset::{self, Filters, Window};
use super::{from_micros, to_micros, Backend, Tx};

/// A stored rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRate {
    /// Internal id.
    pub id: i64,
    /// The rate as memberships bill with it.
    pub rate: TaxRate,
    /// Archived rates (`false`) cannot be given to memberships.
    pub active: bool,
    /// Whether a membership has been given it ([`claim`]): its terms are then fixed.
    pub used: bool,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "t.id, t.tax_rate_key, t.name, t.percentage, t.inclusive, t.country, \
     t.active, t.used, t.created_at";

fn decode(row: &AnyRow) -> Result<StoredRate, sqlx::Error> {
    let percentage: String = row.try_get("percentage")?;
    Ok(StoredRate {
        id: row.try_get("id")?,
        rate: TaxRate {
            tax_rate_id: row.try_get("tax_rate_key")?,
            name: row.try_get("name")?,
            percentage: parse_percentage(&percentage).map_err(|e| sqlx::Error::Decode(e.into()))?,
            inclusive: row.try_get::<i64, _>("inclusive")? == 1,
            country: row.try_get("country")?,
        },
        active: row.try_get::<i64, _>("active")? == 1,
        used: row.try_get::<i64, _>("used")? == 1,
        created_at: from_micros(row.try_get("created_at")?),
    })
}

/// Stores a new active rate of `merchant_id`.
pub async fn insert<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    rate: &TaxRate,
    now: DateTime<Utc>,
) -> Result<StoredRate, sqlx::Error> {
    let sql = format!(
        "INSERT INTO tax_rates (merchant_id, tax_rate_key, name, percentage, inclusive, \
         country, active, created_at) VALUES ($1, $2, $3, $4, $5, $6, 1, $7) RETURNING {}",
        COLUMNS.replace("t.", "")
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(rate.tax_rate_id.as_str())
        .bind(rate.name.as_str())
        .bind(rate.percentage.to_string())
        .bind(i64::from(rate.inclusive))
        .bind(rate.country.as_deref())
        .bind(to_micros(now))
        .fetch_one(executor)
        .await?;
    decode(&row)
}

/// The merchant's rate with this key; with `lock`, locked for the rest of the transaction
/// (PostgreSQL; SQLite's write transaction holds the database lock already).
pub async fn by_key(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: i64,
    key: &str,
) -> Result<Option<StoredRate>, sqlx::Error> {
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM tax_rates t WHERE t.merchant_id = $1 AND t.tax_rate_key = $2{lock}"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(key)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The merchant's rate with this key.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    key: &str,
) -> Result<Option<StoredRate>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM tax_rates t WHERE t.merchant_id = $1 AND t.tax_rate_key = $2"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(key)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The merchant's rates with these keys, in one statement; keys it does not have are left out.
pub async fn by_keys<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    keys: &[String],
) -> Result<Vec<StoredRate>, sqlx::Error> {
    let select = format!("SELECT {COLUMNS} FROM tax_rates t");
    with_keys(executor, &select, "", merchant_id, keys).await
}

/// Runs `head` (a `SELECT` or an `UPDATE` of `tax_rates`) on the merchant's rates with these
/// keys, then `tail`, and decodes the rows it returns.
async fn with_keys<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    head: &str,
    tail: &str,
    merchant_id: i64,
    keys: &[String],
) -> Result<Vec<StoredRate>, sqlx::Error> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "{head} WHERE merchant_id = $1 AND tax_rate_key IN \
         (SELECT column1 FROM (VALUES {}) AS v){tail}",
        super::placeholders(keys.len(), 1, 2)
    );
    let mut query = sqlx::query(&sql).bind(merchant_id);
    for key in keys {
        query = query.bind(key.as_str());
    }
    let rows = query.fetch_all(executor).await?;
    rows.iter().map(decode).collect()
}

/// A page of the merchant's rates, archived ones too, newest first ([`keyset`]).
pub async fn page<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    window: Window,
) -> Result<Vec<StoredRate>, sqlx::Error> {
    let select = format!("SELECT {COLUMNS} FROM tax_rates t");
    let rows = keyset::page(
        executor,
        &select,
        "t",
        merchant_id,
        &Filters::default(),
        window,
    )
    .await?;
    rows.iter().map(decode).collect()
}

/// The merchant's rates with these keys, marked used by the same statement (keys it does not
/// have are left out): a membership is about to bill with them, so their terms are fixed from
/// now on. The row lock the update takes orders it with a concurrent change of terms ([`by_key`]
/// locks the row too): either the change comes first and this reads it, or it sees `used`.
pub async fn claim<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    keys: &[String],
) -> Result<Vec<StoredRate>, sqlx::Error> {
    let returning = format!(" RETURNING {}", COLUMNS.replace("t.", ""));
    with_keys(
        executor,
        "UPDATE tax_rates SET used = 1",
        &returning,
        merchant_id,
        keys,
    )
    .await
}

/// Writes back a rate's changeable fields.
pub async fn save(tx: &mut Tx, merchant_id: i64, stored: &StoredRate) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE tax_rates SET name = $1, percentage = $2, inclusive = $3, country = $4, \
         active = $5 WHERE merchant_id = $6 AND id = $7",
    )
    .bind(stored.rate.name.as_str())
    .bind(stored.rate.percentage.to_string())
    .bind(i64::from(stored.rate.inclusive))
    .bind(stored.rate.country.as_deref())
    .bind(i64::from(stored.active))
    .bind(merchant_id)
    .bind(stored.id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
