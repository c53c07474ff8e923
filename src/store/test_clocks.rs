//! The `test_clocks` table: a sandbox merchant's frozen time, once it advanced its test clock.

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

/// Sets the merchant's test-clock time.
pub async fn set(tx: &mut Tx, merchant_id: i64, now: DateTime<Utc>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO test_clocks (merchant_id, now) VALUES ($1, $2) \
         ON CONFLICT (merchant_id) DO UPDATE SET now = excluded.now",
    )
    .bind(merchant_id)
    .bind(to_micros(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}
