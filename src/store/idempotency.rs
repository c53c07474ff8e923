//! The `idempotency_keys` table: first responses kept for replay.

use chrono::{DateTime, TimeDelta, Utc};

use super::{to_micros, Store};

/// A remembered request.
#[derive(Debug, Clone)]
pub struct Remembered {
    /// Hash of method, path and body of the first request.
    pub request_hash: String,
    /// The first response's status; 0 while that request is still being handled.
    pub status: u16,
    /// The first response's content type.
    pub content_type: Option<String>,
    /// The first response's body.
    pub body: Vec<u8>,
}

/// How long a key and its response are remembered from first use.
pub const RETENTION: TimeDelta = TimeDelta::hours(24);

/// Deletes up to `limit` keys first used before `expired_before`, oldest first, in one statement;
/// returns how many it deleted. A key past its retention is claimed afresh anyway (see
/// [`claim`]), so this only returns the space.
pub async fn purge_expired(
    store: &Store,
    expired_before: DateTime<Utc>,
    limit: i64,
) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query(
        "DELETE FROM idempotency_keys WHERE (merchant_id, idempotency_key) IN \
         (SELECT merchant_id, idempotency_key FROM idempotency_keys WHERE created_at < $1 \
         ORDER BY created_at LIMIT $2)",
    )
    .bind(to_micros(expired_before))
    .bind(limit)
    .execute(store.writer())
    .await?
    .rows_affected())
}

/// Claims `key` for a request with `request_hash`: true when this caller is first (or the previous
/// claim expired before `expired_before`), false when a claim exists.
pub async fn claim(
    store: &Store,
    merchant_id: i64,
    key: &str,
    request_hash: &str,
    now: DateTime<Utc>,
    expired_before: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let mut tx = store.begin().await?;
    sqlx::query(
        "DELETE FROM idempotency_keys \
         WHERE merchant_id = $1 AND idempotency_key = $2 AND created_at < $3",
    )
    .bind(merchant_id)
    .bind(key)
    .bind(to_micros(expired_before))
    .execute(&mut *tx)
    .await?;
    let inserted = sqlx::query(
        "INSERT INTO idempotency_keys (merchant_id, idempotency_key, request_hash, status, created_at) \
         VALUES ($1, $2, $3, 0, $4) ON CONFLICT (merchant_id, idempotency_key) DO NOTHING",
    )
    .bind(merchant_id)
    .bind(key)
    .bind(request_hash)
    .bind(to_micros(now))
    .execute(&mut *tx)
    .await?
    .rows_affected();
    tx.commit().await?;
    Ok(inserted == 1)
}

type RememberedRow = (String, i64, Option<String>, Option<Vec<u8>>);

/// The remembered request under `key`.
pub async fn get(
    store: &Store,
    merchant_id: i64,
    key: &str,
) -> Result<Option<Remembered>, sqlx::Error> {
    let row: Option<RememberedRow> = sqlx::query_as(
        "SELECT request_hash, status, content_type, response_body FROM idempotency_keys \
         WHERE merchant_id = $1 AND idempotency_key = $2",
    )
    .bind(merchant_id)
    .bind(key)
    .fetch_optional(store.pool())
    .await?;
    Ok(
        row.map(|(request_hash, status, content_type, body)| Remembered {
            request_hash,
            status: u16::try_from(status).unwrap_or(0),
            content_type,
            body: body.unwrap_or_default(),
        }),
    )
}

/// Stores the response of the request that holds the claim on `key`.
pub async fn complete(
    store: &Store,
    merchant_id: i64,
    key: &str,
    status: u16,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE idempotency_keys SET status = $1, content_type = $2, response_body = $3 \
         WHERE merchant_id = $4 AND idempotency_key = $5",
    )
    .bind(i64::from(status))
    .bind(content_type)
    .bind(body)
    .bind(merchant_id)
    .bind(key)
    .execute(store.writer())
    .await
    .map(|_| ())
}

/// Drops the claim on `key`, so the request may be retried (after a server error).
pub async fn release(store: &Store, merchant_id: i64, key: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM idempotency_keys WHERE merchant_id = $1 AND idempotency_key = $2")
        .bind(merchant_id)
        .bind(key)
        .execute(store.writer())
        .await
        .map(|_| ())
}
