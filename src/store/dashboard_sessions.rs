//! The `dashboard_sessions` table: who is logged in to the merchant dashboard, found by the
//! keyed digest of the token in their cookie. A session ends after [`IDLE`] without a request,
//! measured on the server's clock and on the merchant's (its test clock, when it has one): each
//! request both checks and renews a session in one statement ([`touch`]).

use chrono::{DateTime, Duration, Utc};

use super::{to_micros, Store};

/// How long a session lasts without a request.
pub const IDLE: Duration = Duration::minutes(30);

/// The merchant's time in SQL: its test clock, else the server's time (`$2`).
const MERCHANT_NOW: &str = "COALESCE((SELECT t.now FROM test_clocks t \
     WHERE t.merchant_id = dashboard_sessions.merchant_id), $2)";

/// Opens a session of `merchant_id` under `token_digest` at the server time `now`.
pub async fn open(
    store: &Store,
    merchant_id: i64,
    token_digest: &str,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(&format!(
        "INSERT INTO dashboard_sessions \
         (merchant_id, token_digest, created_at, seen_at, merchant_seen_at) \
         VALUES ($1, $3, $2, $2, {})",
        MERCHANT_NOW.replace("dashboard_sessions.merchant_id", "$1")
    ))
    .bind(merchant_id)
    .bind(to_micros(now))
    .bind(token_digest)
    .execute(store.writer())
    .await
    .map(|_| ())
}

/// Deletes up to `limit` sessions idle for [`IDLE`] on the server's clock at `now`, oldest
/// first, in one statement (housekeeping); returns how many it deleted. Such a session could
/// not be used any more ([`touch`] refuses it), so this only returns the space.
pub async fn purge_ended(
    store: &Store,
    now: DateTime<Utc>,
    limit: i64,
) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query(
        "DELETE FROM dashboard_sessions WHERE id IN \
         (SELECT id FROM dashboard_sessions WHERE seen_at <= $1 ORDER BY seen_at LIMIT $2)",
    )
    .bind(to_micros(now - IDLE))
    .bind(limit)
    .execute(store.writer())
    .await?
    .rows_affected())
}

/// The merchant of the session under `token_digest` if it has not been idle for [`IDLE`] on the
/// server's clock (at `now`) or on the merchant's; the session is renewed by the same statement.
pub async fn touch(
    store: &Store,
    token_digest: &str,
    now: DateTime<Utc>,
) -> Result<Option<i64>, sqlx::Error> {
    let idle = IDLE.num_microseconds().unwrap_or(i64::MAX);
    sqlx::query_scalar(&format!(
        "UPDATE dashboard_sessions SET seen_at = $2, merchant_seen_at = {MERCHANT_NOW} \
         WHERE token_digest = $1 AND seen_at > $2 - $3 \
         AND merchant_seen_at > {MERCHANT_NOW} - $3 RETURNING merchant_id"
    ))
    .bind(token_digest)
    .bind(to_micros(now))
    .bind(idle)
    .fetch_optional(store.writer())
    .await
}

/// Renews the session under `token_digest` on the merchant's clock only: the session that moved
/// its merchant's test clock forward (the sandbox page) is not ended by its own move. The
/// server's clock (`now`) still bounds it.
pub async fn follow_clock(
    store: &Store,
    token_digest: &str,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(&format!(
        "UPDATE dashboard_sessions SET merchant_seen_at = {MERCHANT_NOW} WHERE token_digest = $1"
    ))
    .bind(token_digest)
    .bind(to_micros(now))
    .execute(store.writer())
    .await
    .map(|_| ())
}

/// Ends the session under `token_digest`, if there is one.
pub async fn close(store: &Store, token_digest: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM dashboard_sessions WHERE token_digest = $1")
        .bind(token_digest)
        .execute(store.writer())
        .await
        .map(|_| ())
}
