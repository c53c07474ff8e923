//! The `merchants` table.

use chrono::{DateTime, Utc};

use super::{from_micros, to_micros, Store, Tx};

/// Whether a merchant uses the sandbox processor and test helpers, or is live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Test cards, test clocks, no real money.
    Sandbox,
    /// Real processors; test helpers refused.
    Live,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Sandbox => "sandbox",
            Mode::Live => "live",
        }
    }

    fn from_db(text: &str) -> Self {
        if text == "live" {
            Mode::Live
        } else {
            Mode::Sandbox
        }
    }
}

/// A merchant as stored. Secrets are sealed; the password is an argon2id hash.
#[derive(Debug, Clone)]
pub struct Merchant {
    /// Numeric id (the JWT subject and the notifications' `MerchantId`).
    pub id: i64,
    /// Display name, shown on hosted pages and e-mails.
    pub name: String,
    /// Login name for `POST /auth`.
    pub user_name: String,
    /// argon2id PHC string.
    pub password_hash: String,
    /// The merchant's processor key (UUID) that customers are created under.
    pub processor_key: String,
    /// The merchant secret, sealed with the server key.
    pub secret_sealed: String,
    /// The Standard Webhooks signing secret, sealed with the server key.
    pub webhook_secret_sealed: String,
    /// Sandbox or live.
    pub mode: Mode,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// What is needed to insert a merchant.
#[derive(Debug, Clone)]
pub struct NewMerchant {
    /// Display name.
    pub name: String,
    /// Login name.
    pub user_name: String,
    /// argon2id PHC string.
    pub password_hash: String,
    /// Processor key (UUID).
    pub processor_key: String,
    /// Keyed digest of the merchant secret, for lookup by secret.
    pub secret_digest: String,
    /// The merchant secret, sealed.
    pub secret_sealed: String,
    /// The webhook signing secret, sealed.
    pub webhook_secret_sealed: String,
    /// Sandbox or live.
    pub mode: Mode,
}

type MerchantRow = (
    i64,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    i64,
);

const COLUMNS: &str = "id, name, user_name, password_hash, processor_key, secret_sealed, \
                       webhook_secret_sealed, mode, created_at";

fn from_row(row: MerchantRow) -> Merchant {
    let (id, name, user_name, password_hash, processor_key, secret_sealed, webhook, mode, created) =
        row;
    Merchant {
        id,
        name,
        user_name,
        password_hash,
        processor_key,
        secret_sealed,
        webhook_secret_sealed: webhook,
        mode: Mode::from_db(&mode),
        created_at: from_micros(created),
    }
}

/// Inserts a merchant and returns its id.
pub async fn insert(
    tx: &mut Tx,
    merchant: &NewMerchant,
    now: DateTime<Utc>,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO merchants (name, user_name, password_hash, processor_key, secret_digest, \
         secret_sealed, webhook_secret_sealed, mode, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(&merchant.name)
    .bind(&merchant.user_name)
    .bind(&merchant.password_hash)
    .bind(&merchant.processor_key)
    .bind(&merchant.secret_digest)
    .bind(&merchant.secret_sealed)
    .bind(&merchant.webhook_secret_sealed)
    .bind(merchant.mode.as_str())
    .bind(to_micros(now))
    .fetch_one(&mut **tx)
    .await
}

/// The merchant with this login name.
pub async fn by_user_name(store: &Store, user_name: &str) -> Result<Option<Merchant>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM merchants WHERE user_name = $1");
    let row: Option<MerchantRow> = sqlx::query_as(&sql)
        .bind(user_name)
        .fetch_optional(store.pool())
        .await?;
    Ok(row.map(from_row))
}

/// The merchant with this id.
pub async fn by_id(store: &Store, id: i64) -> Result<Option<Merchant>, sqlx::Error> {
    by_id_in(store.pool(), id).await
}

/// The merchant with this id, read through `executor` (a transaction, say).
pub async fn by_id_in<'c, E: sqlx::Executor<'c, Database = sqlx::Any>>(
    executor: E,
    id: i64,
) -> Result<Option<Merchant>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM merchants WHERE id = $1");
    let row: Option<MerchantRow> = sqlx::query_as(&sql)
        .bind(id)
        .fetch_optional(executor)
        .await?;
    Ok(row.map(from_row))
}

/// How many merchants exist.
pub async fn count(store: &Store) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM merchants")
        .fetch_one(store.pool())
        .await
}

/// Replaces the merchant secret (digest and sealed copy) of the merchant with this login name.
/// Returns false when there is no such merchant.
pub async fn replace_secret(
    tx: &mut Tx,
    user_name: &str,
    secret_digest: &str,
    secret_sealed: &str,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE merchants SET secret_digest = $1, secret_sealed = $2 WHERE user_name = $3",
    )
    .bind(secret_digest)
    .bind(secret_sealed)
    .bind(user_name)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The merchant whose secret has this lookup digest.
pub async fn by_secret_digest(
    store: &Store,
    digest: &str,
) -> Result<Option<Merchant>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM merchants WHERE secret_digest = $1");
    let row: Option<MerchantRow> = sqlx::query_as(&sql)
        .bind(digest)
        .fetch_optional(store.pool())
        .await?;
    Ok(row.map(from_row))
}
