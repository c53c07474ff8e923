//! SEPA processors a merchant connected (DESIGN §18): each is a debit processor of the
//! merchant's set (`payment_processors`, connector `sepa`) with its creditor details in
//! `sepa_accounts`. Every query is scoped by merchant id.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor, Row};

use super::processors::{self, Connected, Connector, PaymentProcessor, ProcessorKind, Removal};
use super::{from_micros, Store, Tx};

/// At most this many SEPA processors per merchant.
pub const MAX_PER_MERCHANT: i64 = 10;

/// The creditor a SEPA processor collects for, its values already checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Creditor {
    /// The SEPA creditor identifier (`DE98ZZZ09999999999`).
    pub creditor_id: String,
    /// The creditor name the collection files and mandates carry.
    pub creditor_name: String,
    /// The collection account's IBAN, electronic form.
    pub iban: String,
    /// The collection account's BIC, when given.
    pub bic: Option<String>,
    /// Days between a debit's pre-notification and its collection, 1–14.
    pub lead_days: i64,
}

/// A connected SEPA processor.
#[derive(Debug, Clone)]
pub struct Account {
    /// Its `PaymentProcessorId` (301 and up).
    pub processor_id: i64,
    /// Its `PaymentProcessorKey` (UUID).
    pub processor_key: String,
    /// Its name.
    pub name: String,
    /// Whom it collects for, into which account.
    pub creditor: Creditor,
    /// When it was connected.
    pub created_at: DateTime<Utc>,
}

impl Account {
    /// The processor as events and notifications name it (an alternative method: no card).
    pub fn into_processor(self) -> PaymentProcessor {
        PaymentProcessor {
            processor_id: self.processor_id,
            processor_key: self.processor_key,
            name: self.name,
            kind: ProcessorKind::Alternative,
        }
    }
}

/// A change of a SEPA processor; `None` keeps what is stored.
#[derive(Debug, Default)]
pub struct Changes {
    /// A new name.
    pub name: Option<String>,
    /// A new creditor name.
    pub creditor_name: Option<String>,
    /// A new collection IBAN.
    pub iban: Option<String>,
    /// A new BIC (`Some(None)` removes it).
    pub bic: Option<Option<String>>,
    /// New lead days.
    pub lead_days: Option<i64>,
}

const COLUMNS: &str =
    "p.processor_id, p.processor_key, p.name, p.created_at, s.creditor_id, s.creditor_name, \
                       s.iban, s.bic, s.lead_days";

const FROM: &str = "FROM payment_processors p JOIN sepa_accounts s \
                    ON s.merchant_id = p.merchant_id AND s.processor_id = p.processor_id";

fn decode(row: &sqlx::any::AnyRow) -> Result<Account, sqlx::Error> {
    Ok(Account {
        processor_id: row.try_get("processor_id")?,
        processor_key: row.try_get("processor_key")?,
        name: row.try_get("name")?,
        created_at: from_micros(row.try_get("created_at")?),
        creditor: Creditor {
            creditor_id: row.try_get("creditor_id")?,
            creditor_name: row.try_get("creditor_name")?,
            iban: row.try_get("iban")?,
            bic: row.try_get("bic")?,
            lead_days: row.try_get("lead_days")?,
        },
    })
}

/// Connects a SEPA processor named `name` collecting for `creditor`; `None` when the merchant
/// holds [`MAX_PER_MERCHANT`] already.
pub async fn insert(
    store: &Store,
    merchant_id: i64,
    name: &str,
    creditor: &Creditor,
    now: DateTime<Utc>,
) -> Result<Option<Account>, sqlx::Error> {
    super::retry_unique(|| try_insert(store, merchant_id, name, creditor, now)).await
}

async fn try_insert(
    store: &Store,
    merchant_id: i64,
    name: &str,
    creditor: &Creditor,
    now: DateTime<Utc>,
) -> Result<Option<Account>, sqlx::Error> {
    let mut tx = store.begin().await?;
    let connected = Connected {
        connector: Connector::Sepa,
        name,
        max_held: MAX_PER_MERCHANT,
    };
    let Some(processor_id) =
        processors::insert_connected(&mut tx, store.backend(), merchant_id, &connected, now)
            .await?
    else {
        return Ok(None);
    };
    sqlx::query(
        "INSERT INTO sepa_accounts (merchant_id, processor_id, creditor_id, creditor_name, iban, \
         bic, lead_days) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(merchant_id)
    .bind(processor_id)
    .bind(&creditor.creditor_id)
    .bind(&creditor.creditor_name)
    .bind(&creditor.iban)
    .bind(creditor.bic.as_deref())
    .bind(creditor.lead_days)
    .execute(&mut *tx)
    .await?;
    let account = get(&mut *tx, merchant_id, processor_id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?;
    tx.commit().await?;
    Ok(Some(account))
}

/// The merchant's SEPA processor with this id.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    processor_id: i64,
) -> Result<Option<Account>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE p.merchant_id = $1 AND p.processor_id = $2 \
         AND p.connector = 'sepa'"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(processor_id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The merchant's SEPA processors, oldest first.
pub async fn list<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
) -> Result<Vec<Account>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE p.merchant_id = $1 AND p.connector = 'sepa' \
         ORDER BY p.processor_id"
    );
    let rows = sqlx::query(&sql)
        .bind(merchant_id)
        .fetch_all(executor)
        .await?;
    rows.iter().map(decode).collect()
}

/// Applies `changes` to the merchant's SEPA processor `processor_id`; the processor as it now
/// stands, `None` when there is none.
pub async fn update(
    tx: &mut Tx,
    merchant_id: i64,
    processor_id: i64,
    changes: &Changes,
) -> Result<Option<Account>, sqlx::Error> {
    let Some(current) = get(&mut **tx, merchant_id, processor_id).await? else {
        return Ok(None);
    };
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
    let was = current.creditor;
    sqlx::query(
        "UPDATE sepa_accounts SET creditor_name = $3, iban = $4, bic = $5, lead_days = $6 \
         WHERE merchant_id = $1 AND processor_id = $2",
    )
    .bind(merchant_id)
    .bind(processor_id)
    .bind(changes.creditor_name.as_ref().unwrap_or(&was.creditor_name))
    .bind(changes.iban.as_ref().unwrap_or(&was.iban))
    .bind(changes.bic.clone().unwrap_or(was.bic))
    .bind(changes.lead_days.unwrap_or(was.lead_days))
    .execute(&mut **tx)
    .await?;
    get(&mut **tx, merchant_id, processor_id).await
}

/// Removes the merchant's SEPA processor `processor_id` unless a mandate it holds is still a
/// customer's. Its `payment_processors` row stays behind, listed nowhere, so that its id
/// (which events carry) is never given to another processor.
pub async fn delete(
    tx: &mut Tx,
    merchant_id: i64,
    processor_id: i64,
) -> Result<Removal, sqlx::Error> {
    if get(&mut **tx, merchant_id, processor_id).await?.is_none() {
        return Ok(Removal::NotFound);
    }
    let in_use = processors::holds_payment_methods(tx, merchant_id, processor_id).await?;
    if in_use {
        return Ok(Removal::InUse);
    }
    sqlx::query("DELETE FROM sepa_accounts WHERE merchant_id = $1 AND processor_id = $2")
        .bind(merchant_id)
        .bind(processor_id)
        .execute(&mut **tx)
        .await?;
    Ok(Removal::Removed)
}
