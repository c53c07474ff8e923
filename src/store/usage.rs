//! Usage events and their per-period totals (DESIGN §19).
//!
//! `usage_events` keeps every accepted event under its `(merchant, transactionId)` key, which is
//! what makes an id count once, forever; it is never read to bill. Each accepted event is added,
//! in the transaction that accepts it, to the `usage_totals` row of its membership, meter and
//! period, so that an invoice reads one row per meter whatever the number of events. A total is
//! changed only under its row lock (a no-op upsert takes it), and invoicing marks the rows it
//! bills `billed` under the same lock: an event for a period being billed either lands before
//! the bill or is refused after it, never lost. `unique_count` meters keep their distinct values
//! per period in `usage_unique_values`.

use std::collections::{HashMap, HashSet};
use std::str::FromStr;

use chrono::{DateTime, Utc};
use recur_domain::usage::totals::{Latest, Totals};
use rust_decimal::Decimal;
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::{placeholders, to_micros, Tx};

/// One period of one meter of one membership: what a total is kept for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeriodKey {
    /// The membership's internal id.
    pub membership_id: i64,
    /// The meter's internal id.
    pub meter_id: i64,
    /// The period's start, in microseconds (as every stored time).
    pub period_start: i64,
}

impl PeriodKey {
    /// The key of `membership_id`'s `meter_id` in the period starting at `start`.
    pub fn new(membership_id: i64, meter_id: i64, start: DateTime<Utc>) -> Self {
        Self {
            membership_id,
            meter_id,
            period_start: to_micros(start),
        }
    }
}

/// An event to store.
#[derive(Debug, Clone)]
pub struct NewEvent<'a> {
    /// The merchant's transaction id.
    pub transaction_id: &'a str,
    /// The period total it is added to.
    pub key: PeriodKey,
    /// When it happened (the merchant's time).
    pub occurred_at: DateTime<Utc>,
    /// The property it carries for its meter: a decimal, or a `unique_count` key.
    pub value: Option<String>,
}

/// A period's total as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTotal {
    /// Whose total it is.
    pub key: PeriodKey,
    /// The usage so far.
    pub totals: Totals,
    /// An invoice has billed it: it takes no more events.
    pub billed: bool,
}

/// Stores `events` of `merchant_id` (distinct transaction ids) in one statement: the ids that
/// were new. An id the merchant sent before is left out, and a concurrent request's insert of
/// the same id waits on its key until that request ends, so each id is accepted once.
pub async fn insert_events(
    tx: &mut Tx,
    merchant_id: i64,
    events: &[NewEvent<'_>],
    now: DateTime<Utc>,
) -> Result<HashSet<String>, sqlx::Error> {
    if events.is_empty() {
        return Ok(HashSet::new());
    }
    let sql = format!(
        "INSERT INTO usage_events (merchant_id, transaction_id, membership_id, meter_id, \
         period_start, occurred_at, value, received_at) VALUES {} \
         ON CONFLICT (merchant_id, transaction_id) DO NOTHING RETURNING transaction_id",
        placeholders(events.len(), 8, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let received = to_micros(now);
    let mut query = sqlx::query_scalar::<_, String>(&sql);
    for event in events {
        query = query
            .bind(merchant_id)
            .bind(event.transaction_id)
            .bind(event.key.membership_id)
            .bind(event.key.meter_id)
            .bind(event.key.period_start)
            .bind(to_micros(event.occurred_at))
            .bind(event.value.as_deref())
            .bind(received);
    }
    Ok(query.fetch_all(&mut **tx).await?.into_iter().collect())
}

/// Stores the distinct `unique_count` values not yet seen in their period, in one statement:
/// how many were new, by period.
pub async fn insert_unique_values(
    tx: &mut Tx,
    values: &[(PeriodKey, String)],
) -> Result<HashMap<PeriodKey, i64>, sqlx::Error> {
    let mut new = HashMap::new();
    if values.is_empty() {
        return Ok(new);
    }
    let sql = format!(
        "INSERT INTO usage_unique_values (membership_id, meter_id, period_start, value_key) \
         VALUES {} ON CONFLICT DO NOTHING RETURNING membership_id, meter_id, period_start",
        placeholders(values.len(), 4, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for (key, value) in values {
        query = query
            .bind(key.membership_id)
            .bind(key.meter_id)
            .bind(key.period_start)
            .bind(value.as_str());
    }
    for row in query.fetch_all(&mut **tx).await? {
        *new.entry(decode_key(&row)?).or_insert(0) += 1;
    }
    Ok(new)
}

const TOTAL_COLUMNS: &str = "membership_id, meter_id, period_start, event_count, value_sum, \
     value_max, latest_at, latest_value, unique_count, billed";

/// The totals of `keys` (distinct, sorted: rows are locked in that order), each created empty
/// when it has none yet, locked until the transaction ends, in one statement. `bill`: mark them
/// billed too (the invoicing of their period); otherwise they are left as they are.
pub async fn lock_totals(
    tx: &mut Tx,
    keys: &[PeriodKey],
    bill: bool,
) -> Result<Vec<StoredTotal>, sqlx::Error> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let billed = if bill { "1" } else { "usage_totals.billed" };
    let sql = format!(
        "INSERT INTO usage_totals (membership_id, meter_id, period_start, event_count, \
         value_sum, unique_count, billed) \
         SELECT column1, column2, column3, 0, '0', 0, 0 FROM (VALUES {}) AS v WHERE true \
         ORDER BY column1, column2, column3 \
         ON CONFLICT (membership_id, meter_id, period_start) DO UPDATE SET billed = {billed} \
         RETURNING {TOTAL_COLUMNS}",
        placeholders(keys.len(), 3, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for key in keys {
        query = query
            .bind(key.membership_id)
            .bind(key.meter_id)
            .bind(key.period_start);
    }
    let rows = query.fetch_all(&mut **tx).await?;
    rows.iter().map(decode_total).collect()
}

/// Writes `totals` (rows locked by [`lock_totals`] in this transaction) in one statement.
pub async fn write_totals(tx: &mut Tx, totals: &[(PeriodKey, Totals)]) -> Result<(), sqlx::Error> {
    if totals.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "UPDATE usage_totals SET event_count = v.column4, value_sum = v.column5, \
         value_max = v.column6, latest_at = v.column7, latest_value = v.column8, \
         unique_count = v.column9 FROM (VALUES {}) AS v \
         WHERE usage_totals.membership_id = v.column1 AND usage_totals.meter_id = v.column2 \
         AND usage_totals.period_start = v.column3",
        placeholders(totals.len(), 9, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for (key, t) in totals {
        query = query
            .bind(key.membership_id)
            .bind(key.meter_id)
            .bind(key.period_start)
            .bind(t.count)
            .bind(t.sum.to_string())
            .bind(t.max.map(|m| m.to_string()))
            .bind(t.latest.as_ref().map(|l| l.at))
            .bind(t.latest.as_ref().map(|l| l.value.to_string()))
            .bind(t.unique);
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

/// The stored totals of `keys`, without locking (a key with none has no row): what a reading of
/// the usage so far shows.
pub async fn totals<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    keys: &[PeriodKey],
) -> Result<Vec<StoredTotal>, sqlx::Error> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT {} FROM usage_totals t JOIN (VALUES {}) AS v ON t.membership_id = v.column1 \
         AND t.meter_id = v.column2 AND t.period_start = v.column3",
        super::qualified(TOTAL_COLUMNS, "t", None),
        placeholders(keys.len(), 3, 1)
    );
    let mut query = sqlx::query(&sql);
    for key in keys {
        query = query
            .bind(key.membership_id)
            .bind(key.meter_id)
            .bind(key.period_start);
    }
    let rows = query.fetch_all(executor).await?;
    rows.iter().map(decode_total).collect()
}

/// The stored totals of `meter_ids` (distinct) of the merchant's membership `membership_id` in
/// its periods starting at or before `until`: of each meter the latest `per_meter`, newest
/// first, without locking, in one statement. Each meter's rows are one descending range read of
/// the primary key `(membership_id, meter_id, period_start)` that stops after `per_meter` rows,
/// so the cost does not grow with the periods or events stored. A membership of another
/// merchant has none.
pub async fn recent_totals<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    membership_id: i64,
    meter_ids: &[i64],
    until: DateTime<Utc>,
    per_meter: u32,
) -> Result<Vec<StoredTotal>, sqlx::Error> {
    if meter_ids.is_empty() || per_meter == 0 {
        return Ok(Vec::new());
    }
    let columns = super::qualified(TOTAL_COLUMNS, "t", None);
    let sql = (0..meter_ids.len())
        .map(|i| {
            format!(
                "SELECT * FROM (SELECT {columns} FROM usage_totals t \
                 JOIN memberships m ON m.id = t.membership_id \
                 WHERE m.merchant_id = $1 AND t.membership_id = $2 AND t.period_start <= $3 \
                 AND t.meter_id = ${} ORDER BY t.period_start DESC LIMIT {per_meter}) AS h{i}",
                i + 4
            )
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    let mut query = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(membership_id)
        .bind(to_micros(until));
    for meter_id in meter_ids {
        query = query.bind(*meter_id);
    }
    let rows = query.fetch_all(executor).await?;
    rows.iter().map(decode_total).collect()
}

fn decode_key(row: &AnyRow) -> Result<PeriodKey, sqlx::Error> {
    Ok(PeriodKey {
        membership_id: row.try_get("membership_id")?,
        meter_id: row.try_get("meter_id")?,
        period_start: row.try_get("period_start")?,
    })
}

fn decimal(text: &str) -> Result<Decimal, sqlx::Error> {
    Decimal::from_str(text).map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

fn decode_total(row: &AnyRow) -> Result<StoredTotal, sqlx::Error> {
    let sum: String = row.try_get("value_sum")?;
    let max: Option<String> = row.try_get("value_max")?;
    let latest_at: Option<i64> = row.try_get("latest_at")?;
    let latest_value: Option<String> = row.try_get("latest_value")?;
    let latest = match (latest_at, latest_value) {
        (Some(at), Some(value)) => Some(Latest {
            at,
            value: decimal(&value)?,
        }),
        _ => None,
    };
    Ok(StoredTotal {
        key: decode_key(row)?,
        totals: Totals {
            count: row.try_get("event_count")?,
            sum: decimal(&sum)?,
            max: max.as_deref().map(decimal).transpose()?,
            latest,
            unique: row.try_get("unique_count")?,
        },
        billed: row.try_get::<i64, _>("billed")? == 1,
    })
}
