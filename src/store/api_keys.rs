//! The `api_keys` table: merchants' API keys, each stored as the keyed digest of its secret.

use chrono::{DateTime, Utc};

use super::{from_micros, to_micros, Store};

/// The most live (not revoked) keys a merchant may hold; creating another is refused.
pub const MAX_LIVE_PER_MERCHANT: i64 = 100;

/// What a key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Reads only: GET and HEAD.
    Read,
    /// Everything the merchant may do.
    Write,
}

impl Scope {
    /// The stored and shown name: `read` or `write`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
        }
    }

    /// The scope named `text`, if any.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "read" => Some(Scope::Read),
            "write" => Some(Scope::Write),
            _ => None,
        }
    }
}

/// A key as listed: never its secret.
#[derive(Debug, Clone)]
pub struct ApiKey {
    /// Public id (`ak_…`).
    pub key_id: String,
    /// The merchant's name for it.
    pub name: String,
    /// What it may do.
    pub scope: Scope,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it was last used, to within a minute; `None` before its first use.
    pub last_used_at: Option<DateTime<Utc>>,
}

/// A live key found by its secret's digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveKey {
    /// Public id (`ak_…`).
    pub key_id: String,
    /// Whose it is.
    pub merchant_id: i64,
    /// What it may do.
    pub scope: Scope,
}

/// What is needed to store a new key.
#[derive(Debug, Clone)]
pub struct NewApiKey {
    /// Public id (`ak_…`).
    pub key_id: String,
    /// The merchant's name for it.
    pub name: String,
    /// What it may do.
    pub scope: Scope,
    /// Keyed lookup digest of the secret.
    pub secret_digest: String,
}

type KeyRow = (String, String, String, i64, Option<i64>);

fn from_row((key_id, name, scope, created_at, last_used_at): KeyRow) -> ApiKey {
    ApiKey {
        key_id,
        name,
        scope: Scope::parse(&scope).unwrap_or(Scope::Read),
        created_at: from_micros(created_at),
        last_used_at: last_used_at.map(from_micros),
    }
}

/// Stores `key` for `merchant_id` unless the merchant already holds
/// [`MAX_LIVE_PER_MERCHANT`] live keys (then `None`). The count and the insert run under the
/// merchant's row lock (PostgreSQL; SQLite's write transaction holds the database), so
/// concurrent creates never pass the cap.
pub async fn insert(
    store: &Store,
    merchant_id: i64,
    key: &NewApiKey,
    now: DateTime<Utc>,
) -> Result<Option<ApiKey>, sqlx::Error> {
    let mut tx = store.begin().await?;
    super::lock_merchant(&mut tx, store.backend(), merchant_id).await?;
    let live: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM api_keys WHERE merchant_id = $1 AND revoked_at IS NULL",
    )
    .bind(merchant_id)
    .fetch_one(&mut *tx)
    .await?;
    if live >= MAX_LIVE_PER_MERCHANT {
        return Ok(None);
    }
    sqlx::query(
        "INSERT INTO api_keys (merchant_id, key_id, name, scope, secret_digest, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(merchant_id)
    .bind(&key.key_id)
    .bind(&key.name)
    .bind(key.scope.as_str())
    .bind(&key.secret_digest)
    .bind(to_micros(now))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(ApiKey {
        key_id: key.key_id.clone(),
        name: key.name.clone(),
        scope: key.scope,
        created_at: from_micros(to_micros(now)),
        last_used_at: None,
    }))
}

/// The merchant's live keys, newest first (at most [`MAX_LIVE_PER_MERCHANT`]).
pub async fn live_for_merchant(
    store: &Store,
    merchant_id: i64,
) -> Result<Vec<ApiKey>, sqlx::Error> {
    let rows: Vec<KeyRow> = sqlx::query_as(
        "SELECT key_id, name, scope, created_at, last_used_at FROM api_keys \
         WHERE merchant_id = $1 AND revoked_at IS NULL \
         ORDER BY created_at DESC, id DESC LIMIT $2",
    )
    .bind(merchant_id)
    .bind(MAX_LIVE_PER_MERCHANT)
    .fetch_all(store.pool())
    .await?;
    Ok(rows.into_iter().map(from_row).collect())
}

/// Revokes the merchant's live key `key_id` at `now`; returns its secret's digest, or `None`
/// when the merchant has no such live key.
pub async fn revoke(
    store: &Store,
    merchant_id: i64,
    key_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE api_keys SET revoked_at = $3 \
         WHERE merchant_id = $1 AND key_id = $2 AND revoked_at IS NULL \
         RETURNING secret_digest",
    )
    .bind(merchant_id)
    .bind(key_id)
    .bind(to_micros(now))
    .fetch_optional(store.writer())
    .await
}

/// The live key whose secret has this digest. (The digest names the merchant: this is how a
/// request's key finds it, as `merchants::by_secret_digest` finds a merchant secret's.)
pub async fn live_by_digest(store: &Store, digest: &str) -> Result<Option<LiveKey>, sqlx::Error> {
    let row: Option<(String, i64, String)> = sqlx::query_as(
        "SELECT key_id, merchant_id, scope FROM api_keys \
         WHERE secret_digest = $1 AND revoked_at IS NULL",
    )
    .bind(digest)
    .fetch_optional(store.pool())
    .await?;
    Ok(row.and_then(|(key_id, merchant_id, scope)| {
        Some(LiveKey {
            key_id,
            merchant_id,
            scope: Scope::parse(&scope)?,
        })
    }))
}

/// Records a use of the merchant's key at `at`, unless a use within the minute before is
/// already recorded (whichever process recorded it).
pub async fn record_use(
    store: &Store,
    merchant_id: i64,
    key_id: &str,
    at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE api_keys SET last_used_at = $3 \
         WHERE merchant_id = $1 AND key_id = $2 \
         AND (last_used_at IS NULL OR last_used_at <= $4)",
    )
    .bind(merchant_id)
    .bind(key_id)
    .bind(to_micros(at))
    .bind(to_micros(at - chrono::Duration::minutes(1)))
    .execute(store.writer())
    .await
    .map(|_| ())
}
