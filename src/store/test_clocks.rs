//! The `test_clocks` table: a sandbox merchant's frozen time, once it advanced its test clock,
//! and whether the catch-up of its last advance is still unfinished.
//!
//! An unfinished catch-up is owned by a *stamp*: the real time its owner last showed life. The
//! owner renews its stamp as it works and clears it when done; a stamp older than the billing
//! recovery grace belongs to a process that died, and any process's billing worker may take it
//! over by writing its own.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::{from_micros, to_micros, Tx};

/// The merchant's test-clock time, if it has one.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    let now: Option<i64> = sqlx::query_scalar("SELECT now FROM test_clocks WHERE merchant_id = $1")
        .bind(merchant_id)
        .fetch_optional(executor)
        .await?;
    Ok(now.map(from_micros))
}

/// Sets the merchant's test-clock time to `now` and marks its catch-up unfinished, owned by
/// `stamp`.
pub async fn advance(
    tx: &mut Tx,
    merchant_id: i64,
    now: DateTime<Utc>,
    stamp: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO test_clocks (merchant_id, now, catching_up_since) VALUES ($1, $2, $3) \
         ON CONFLICT (merchant_id) DO UPDATE SET now = excluded.now, \
         catching_up_since = excluded.catching_up_since",
    )
    .bind(merchant_id)
    .bind(to_micros(now))
    .bind(to_micros(stamp))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Replaces the owner's stamp `held` with `fresh`; `false` when another process took the
/// catch-up over (or it finished) meanwhile.
pub async fn renew<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    held: DateTime<Utc>,
    fresh: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE test_clocks SET catching_up_since = $3 \
         WHERE merchant_id = $1 AND catching_up_since = $2",
    )
    .bind(merchant_id)
    .bind(to_micros(held))
    .bind(to_micros(fresh))
    .execute(executor)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Marks the catch-up owned by `held` finished.
pub async fn finish<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    held: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE test_clocks SET catching_up_since = NULL \
         WHERE merchant_id = $1 AND catching_up_since = $2",
    )
    .bind(merchant_id)
    .bind(to_micros(held))
    .execute(executor)
    .await?;
    Ok(())
}

/// Takes over the oldest unfinished catch-up whose owner fell silent before `stalled_before`,
/// owning it with `stamp`; returns the merchant and its clock's time.
pub async fn claim_stalled<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    stalled_before: DateTime<Utc>,
    stamp: DateTime<Utc>,
) -> Result<Option<(i64, DateTime<Utc>)>, sqlx::Error> {
    let row: Option<(i64, i64)> = sqlx::query_as(
        "UPDATE test_clocks SET catching_up_since = $2 \
         WHERE merchant_id = (SELECT merchant_id FROM test_clocks \
         WHERE catching_up_since <= $1 ORDER BY catching_up_since LIMIT 1) \
         AND catching_up_since <= $1 RETURNING merchant_id, now",
    )
    .bind(to_micros(stalled_before))
    .bind(to_micros(stamp))
    .fetch_optional(executor)
    .await?;
    Ok(row.map(|(merchant_id, now)| (merchant_id, from_micros(now))))
}
