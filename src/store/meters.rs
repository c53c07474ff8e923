//! The `meters` table (DESIGN §19): what a merchant counts, and how a period's usage events add
//! up. A meter's code and aggregation never change (metered prices and stored totals name
//! them); its name and `active` do. Every query is scoped by merchant id.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use recur_domain::usage::meter::Aggregation;
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::keyset::{self, Filters, Value, Window};
use super::{from_micros, to_micros, Backend, Tx};

/// A stored meter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meter {
    /// Internal id.
    pub id: i64,
    /// `mtr_…`.
    pub meter_key: String,
    /// What usage events name it by, unique per merchant.
    pub code: String,
    /// What invoices and pages call it.
    pub name: String,
    /// How a period's events add up.
    pub aggregation: Aggregation,
    /// The event property it reads; `None` for `count`.
    pub property: Option<String>,
    /// Archived meters (`false`) take no events and no new prices.
    pub active: bool,
    /// Creation time (the merchant's).
    pub created_at: DateTime<Utc>,
}

/// The terms of a new meter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMeter {
    /// `mtr_…`.
    pub meter_key: String,
    /// Its code.
    pub code: String,
    /// Its name.
    pub name: String,
    /// Its aggregation.
    pub aggregation: Aggregation,
    /// Its property, for every aggregation but `count`.
    pub property: Option<String>,
}

const COLUMNS: &str = "t.id, t.meter_key, t.code, t.name, t.aggregation, t.property, t.active, \
     t.created_at";

fn decode(row: &AnyRow) -> Result<Meter, sqlx::Error> {
    let aggregation: String = row.try_get("aggregation")?;
    Ok(Meter {
        id: row.try_get("id")?,
        meter_key: row.try_get("meter_key")?,
        code: row.try_get("code")?,
        name: row.try_get("name")?,
        aggregation: Aggregation::parse(&aggregation).map_err(|e| sqlx::Error::Decode(e.into()))?,
        property: row.try_get("property")?,
        active: row.try_get::<i64, _>("active")? == 1,
        created_at: from_micros(row.try_get("created_at")?),
    })
}

/// Stores a new active meter of `merchant_id`: `None` when the merchant has a meter with its
/// code already (the unique index decides, so concurrent creates cannot both succeed).
pub async fn insert(
    tx: &mut Tx,
    merchant_id: i64,
    new: &NewMeter,
    now: DateTime<Utc>,
) -> Result<Option<Meter>, sqlx::Error> {
    let sql = format!(
        "INSERT INTO meters (merchant_id, meter_key, code, name, aggregation, property, active, \
         created_at) VALUES ($1, $2, $3, $4, $5, $6, 1, $7) \
         ON CONFLICT (merchant_id, code) DO NOTHING RETURNING {}",
        COLUMNS.replace("t.", "")
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(new.meter_key.as_str())
        .bind(new.code.as_str())
        .bind(new.name.as_str())
        .bind(new.aggregation.as_str())
        .bind(new.property.as_deref())
        .bind(to_micros(now))
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The merchant's meter with this key.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    meter_key: &str,
) -> Result<Option<Meter>, sqlx::Error> {
    let sql =
        format!("SELECT {COLUMNS} FROM meters t WHERE t.merchant_id = $1 AND t.meter_key = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(meter_key)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The merchant's meter with this key, locked for the rest of the transaction (PostgreSQL;
/// SQLite's write transaction holds the database already): a price created under it is ordered
/// with a concurrent archiving.
pub async fn locked(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: i64,
    meter_key: &str,
) -> Result<Option<Meter>, sqlx::Error> {
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM meters t WHERE t.merchant_id = $1 AND t.meter_key = $2{lock}"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(meter_key)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// A page of the merchant's meters, newest first ([`keyset`]); only the active or the archived
/// ones when `active` is given.
pub async fn page<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    active: Option<bool>,
    window: Window,
) -> Result<Vec<Meter>, sqlx::Error> {
    let mut filters = Filters::default();
    if let Some(active) = active {
        filters.and(vec![Value::Int(i64::from(active))], |p| {
            format!("+t.active = {}", p[0])
        });
    }
    let select = format!("SELECT {COLUMNS} FROM meters t");
    let rows = keyset::page(executor, &select, "t", merchant_id, &filters, window).await?;
    rows.iter().map(decode).collect()
}

/// Renames and/or archives (`false`) or restores the merchant's meter in one statement: the
/// meter as changed, or `None` when the merchant has no such meter.
pub async fn update<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    meter_key: &str,
    name: Option<&str>,
    active: Option<bool>,
) -> Result<Option<Meter>, sqlx::Error> {
    let sql = format!(
        "UPDATE meters SET name = COALESCE($3, name), active = COALESCE($4, active) \
         WHERE merchant_id = $1 AND meter_key = $2 RETURNING {}",
        COLUMNS.replace("t.", "")
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(meter_key)
        .bind(name)
        .bind(active.map(i64::from))
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Which of `codes` (distinct) name archived meters of the merchant, in one statement.
pub async fn archived_codes<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    codes: &[&str],
) -> Result<HashSet<String>, sqlx::Error> {
    if codes.is_empty() {
        return Ok(HashSet::new());
    }
    let list: Vec<String> = (0..codes.len()).map(|i| format!("${}", i + 2)).collect();
    let sql = format!(
        "SELECT code FROM meters WHERE merchant_id = $1 AND active = 0 AND code IN ({})",
        list.join(", ")
    );
    let mut query = sqlx::query_scalar(&sql).bind(merchant_id);
    for code in codes {
        query = query.bind(*code);
    }
    Ok(query.fetch_all(executor).await?.into_iter().collect())
}
