//! Stripe accounts a merchant connected (DESIGN §17): each is a card processor of the merchant's
//! set (`payment_processors`, connector `stripe`) with its keys in `stripe_accounts`, the secret
//! key and the webhook signing secret sealed. Every query is scoped by merchant id.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor, Row};

use super::processors::{self, Connected, Connector, PaymentProcessor, ProcessorKind, Removal};
use super::{from_micros, Store, Tx};

/// At most this many Stripe accounts per merchant.
pub const MAX_PER_MERCHANT: i64 = 10;

/// A Stripe account to connect, its key already checked with Stripe.
#[derive(Debug)]
pub struct NewAccount {
    /// The name shown in the cashier, events and the dashboard.
    pub name: String,
    /// `sk_test_…` or `sk_live_…`, sealed.
    pub secret_key_sealed: String,
    /// The secret key's last four characters, shown in its place.
    pub secret_key_last4: String,
    /// Whether the key is a live one.
    pub live: bool,
    /// `pk_…`, given to Stripe.js on the hosted pages.
    pub publishable_key: String,
    /// The `whsec_…` secret Stripe signs its webhooks with, sealed.
    pub webhook_secret_sealed: String,
}

/// A connected Stripe account.
#[derive(Debug, Clone)]
pub struct Account {
    /// Its `PaymentProcessorId` (301 and up).
    pub processor_id: i64,
    /// Its `PaymentProcessorKey` (UUID).
    pub processor_key: String,
    /// Its name.
    pub name: String,
    /// The secret key, sealed.
    pub secret_key_sealed: String,
    /// The secret key's last four characters.
    pub secret_key_last4: String,
    /// Whether the key is a live one.
    pub live: bool,
    /// `pk_…`.
    pub publishable_key: String,
    /// The webhook signing secret, sealed.
    pub webhook_secret_sealed: String,
    /// When it was connected.
    pub created_at: DateTime<Utc>,
}

impl Account {
    /// The account as the card processor events and notifications name.
    pub fn into_processor(self) -> PaymentProcessor {
        PaymentProcessor {
            processor_id: self.processor_id,
            processor_key: self.processor_key,
            name: self.name,
            kind: ProcessorKind::Card,
        }
    }
}

/// A change of an account; `None` keeps what is stored.
#[derive(Debug, Default)]
pub struct Changes {
    /// A new name.
    pub name: Option<String>,
    /// A new secret key (sealed) with its last four characters and mode.
    pub secret_key: Option<(String, String, bool)>,
    /// A new publishable key.
    pub publishable_key: Option<String>,
    /// A new webhook signing secret, sealed.
    pub webhook_secret_sealed: Option<String>,
}

const COLUMNS: &str = "p.processor_id, p.processor_key, p.name, p.created_at, \
                       s.secret_key_sealed, s.secret_key_last4, s.live, s.publishable_key, \
                       s.webhook_secret_sealed";

const FROM: &str = "FROM payment_processors p JOIN stripe_accounts s \
                    ON s.merchant_id = p.merchant_id AND s.processor_id = p.processor_id";

fn decode(row: &sqlx::any::AnyRow) -> Result<Account, sqlx::Error> {
    Ok(Account {
        processor_id: row.try_get("processor_id")?,
        processor_key: row.try_get("processor_key")?,
        name: row.try_get("name")?,
        secret_key_sealed: row.try_get("secret_key_sealed")?,
        secret_key_last4: row.try_get("secret_key_last4")?,
        live: row.try_get::<i64, _>("live")? == 1,
        publishable_key: row.try_get("publishable_key")?,
        webhook_secret_sealed: row.try_get("webhook_secret_sealed")?,
        created_at: from_micros(row.try_get("created_at")?),
    })
}

/// Connects `new` for the merchant ([`processors::insert_connected`]); `None` when the merchant
/// holds [`MAX_PER_MERCHANT`] already.
pub async fn insert(
    store: &Store,
    merchant_id: i64,
    new: &NewAccount,
    now: DateTime<Utc>,
) -> Result<Option<Account>, sqlx::Error> {
    super::retry_unique(|| try_insert(store, merchant_id, new, now)).await
}

async fn try_insert(
    store: &Store,
    merchant_id: i64,
    new: &NewAccount,
    now: DateTime<Utc>,
) -> Result<Option<Account>, sqlx::Error> {
    let mut tx = store.begin().await?;
    let connected = Connected {
        connector: Connector::Stripe,
        name: &new.name,
        max_held: MAX_PER_MERCHANT,
    };
    let Some(processor_id) =
        processors::insert_connected(&mut tx, store.backend(), merchant_id, &connected, now)
            .await?
    else {
        return Ok(None);
    };
    sqlx::query(
        "INSERT INTO stripe_accounts (merchant_id, processor_id, secret_key_sealed, \
         secret_key_last4, live, publishable_key, webhook_secret_sealed) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(merchant_id)
    .bind(processor_id)
    .bind(&new.secret_key_sealed)
    .bind(&new.secret_key_last4)
    .bind(i64::from(new.live))
    .bind(&new.publishable_key)
    .bind(&new.webhook_secret_sealed)
    .execute(&mut *tx)
    .await?;
    let account = get(&mut *tx, merchant_id, processor_id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?;
    tx.commit().await?;
    Ok(Some(account))
}

/// The merchant's Stripe account with this processor id.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    processor_id: i64,
) -> Result<Option<Account>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE p.merchant_id = $1 AND p.processor_id = $2 \
         AND p.connector = 'stripe'"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(processor_id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The connected account with this processor id, whichever merchant's it is, with its
/// merchant: for Stripe's webhooks, whose URL names the account only.
pub async fn by_processor_id<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    processor_id: i64,
) -> Result<Option<(i64, Account)>, sqlx::Error> {
    let sql = format!(
        "SELECT p.merchant_id, {COLUMNS} {FROM} WHERE p.processor_id = $1 \
         AND p.connector = 'stripe'"
    );
    let row = sqlx::query(&sql)
        .bind(processor_id)
        .fetch_optional(executor)
        .await?;
    row.as_ref()
        .map(|row| Ok((row.try_get("merchant_id")?, decode(row)?)))
        .transpose()
}

/// The merchant's Stripe accounts, oldest first.
pub async fn list<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
) -> Result<Vec<Account>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE p.merchant_id = $1 AND p.connector = 'stripe' \
         ORDER BY p.processor_id"
    );
    let rows = sqlx::query(&sql)
        .bind(merchant_id)
        .fetch_all(executor)
        .await?;
    rows.iter().map(decode).collect()
}

/// Applies `changes` to the merchant's account `processor_id`; the account as it now stands,
/// `None` when there is none.
pub async fn update(
    tx: &mut Tx,
    merchant_id: i64,
    processor_id: i64,
    changes: &Changes,
) -> Result<Option<Account>, sqlx::Error> {
    if get(&mut **tx, merchant_id, processor_id).await?.is_none() {
        return Ok(None);
    }
    if let Some(name) = &changes.name {
        sqlx::query(
            "UPDATE payment_processors SET name = $3 WHERE merchant_id = $1 AND processor_id = $2",
        )
        .bind(merchant_id)
        .bind(processor_id)
        .bind(name)
        .execute(&mut **tx)
        .await?;
    }
    if let Some((sealed, last4, live)) = &changes.secret_key {
        sqlx::query(
            "UPDATE stripe_accounts SET secret_key_sealed = $3, secret_key_last4 = $4, live = $5 \
             WHERE merchant_id = $1 AND processor_id = $2",
        )
        .bind(merchant_id)
        .bind(processor_id)
        .bind(sealed)
        .bind(last4)
        .bind(i64::from(*live))
        .execute(&mut **tx)
        .await?;
    }
    if let Some(key) = &changes.publishable_key {
        sqlx::query(
            "UPDATE stripe_accounts SET publishable_key = $3 \
             WHERE merchant_id = $1 AND processor_id = $2",
        )
        .bind(merchant_id)
        .bind(processor_id)
        .bind(key)
        .execute(&mut **tx)
        .await?;
    }
    if let Some(sealed) = &changes.webhook_secret_sealed {
        sqlx::query(
            "UPDATE stripe_accounts SET webhook_secret_sealed = $3 \
             WHERE merchant_id = $1 AND processor_id = $2",
        )
        .bind(merchant_id)
        .bind(processor_id)
        .bind(sealed)
        .execute(&mut **tx)
        .await?;
    }
    get(&mut **tx, merchant_id, processor_id).await
}

/// Disconnects the merchant's account `processor_id` unless a payment method it holds is still
/// attached; a default pointing at it falls back to the sandbox gateways. Its keys go; its
/// `payment_processors` row stays behind, listed nowhere, so that its id (which events and
/// Stripe's webhook URL carry) is never given to another account.
pub async fn delete(
    tx: &mut Tx,
    merchant_id: i64,
    processor_id: i64,
) -> Result<Removal, sqlx::Error> {
    if get(&mut **tx, merchant_id, processor_id).await?.is_none() {
        return Ok(Removal::NotFound);
    }
    let in_use = processors::holds_payment_methods(tx, merchant_id, processor_id).await?;
    // A cashier payment parked with its PaymentIntent is settled from this account.
    let parked: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM cashier_sessions WHERE merchant_id = $1 AND pending_processor_id = $2 \
         AND pending_intent IS NOT NULL LIMIT 1",
    )
    .bind(merchant_id)
    .bind(processor_id)
    .fetch_optional(&mut **tx)
    .await?;
    if in_use || parked.is_some() {
        return Ok(Removal::InUse);
    }
    for sql in [
        "DELETE FROM stripe_customers WHERE merchant_id = $1 AND processor_id = $2",
        "DELETE FROM stripe_accounts WHERE merchant_id = $1 AND processor_id = $2",
        "UPDATE merchants SET default_card_processor = NULL \
         WHERE id = $1 AND default_card_processor = $2",
    ] {
        sqlx::query(sql)
            .bind(merchant_id)
            .bind(processor_id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(Removal::Removed)
}

/// The merchant's default card processor: a connected account's id, or `None` for the sandbox
/// gateways.
pub async fn default_card<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT default_card_processor FROM merchants WHERE id = $1")
        .bind(merchant_id)
        .fetch_one(executor)
        .await
}

/// Makes `processor_id` (a connected account of the merchant, or `None` for the sandbox
/// gateways) the merchant's default card processor.
pub async fn set_default_card(
    tx: &mut Tx,
    merchant_id: i64,
    processor_id: Option<i64>,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE merchants SET default_card_processor = $2 WHERE id = $1")
        .bind(merchant_id)
        .bind(processor_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
