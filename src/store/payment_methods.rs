//! The `payment_methods` table: cards saved with a processor, as token, brand, BIN, last four
//! digits and a keyed fingerprint. Never the card number.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::{from_micros, to_micros, Tx};

/// What a payment method is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodType {
    /// A card (its details here).
    Card,
    /// A SEPA Direct Debit mandate (its details in `sepa_mandates`).
    SepaDebit,
}

impl MethodType {
    /// The stored and answered name.
    pub fn as_str(self) -> &'static str {
        match self {
            MethodType::Card => "card",
            MethodType::SepaDebit => "sepa_debit",
        }
    }
}

/// A saved card or mandate.
#[derive(Debug, Clone)]
pub struct PaymentMethod {
    /// Internal id.
    pub id: i64,
    /// Public key, `pm_…`.
    pub payment_method_key: String,
    /// The customer it belongs to.
    pub customer_id: i64,
    /// The processor's token for the card.
    pub processor_token: String,
    /// Card network (`Visa`, …).
    pub brand: String,
    /// First six digits.
    pub bin: String,
    /// Last four digits.
    pub last4: String,
    /// Keyed HMAC of the card number: the same card gives the same value.
    pub fingerprint: String,
    /// When it was saved.
    pub created_at: DateTime<Utc>,
    /// When it became usable for renewals (after a successful payment or verification);
    /// `None` while it waits for one.
    pub attached_at: Option<DateTime<Utc>>,
    /// The connected processor that holds it (a Stripe account); `None` for the sandbox vault.
    pub processor_id: Option<i64>,
    /// Expiry month and year, when the processor told them.
    pub expiry: Option<(i64, i64)>,
    /// Card or mandate.
    pub method_type: MethodType,
}

impl PaymentMethod {
    /// BIN, asterisks, last four (`424242******4242`), for notifications.
    pub fn masked_pan(&self) -> String {
        format!("{}******{}", self.bin, self.last4)
    }
}

/// A card to save.
#[derive(Debug, Clone)]
pub struct NewPaymentMethod<'a> {
    /// Owning merchant.
    pub merchant_id: i64,
    /// Owning customer.
    pub customer_id: i64,
    /// Fresh key.
    pub payment_method_key: String,
    /// Processor token.
    pub processor_token: &'a str,
    /// Card network.
    pub brand: &'a str,
    /// First six digits.
    pub bin: &'a str,
    /// Last four digits.
    pub last4: &'a str,
    /// Keyed fingerprint.
    pub fingerprint: &'a str,
    /// Usable for renewals at once (a verified card); otherwise only after [`attach`].
    pub attached: bool,
    /// The connected processor that holds it; `None` for the sandbox vault.
    pub processor_id: Option<i64>,
    /// Expiry month and year, when the processor told them.
    pub expiry: Option<(i64, i64)>,
    /// Card or mandate.
    pub method_type: MethodType,
}

const COLUMNS: &str =
    "id, payment_method_key, customer_id, processor_token, brand, bin, last4, fingerprint, \
    created_at, attached_at, processor_id, exp_month, exp_year, method_type";

fn decode(row: &AnyRow) -> Result<PaymentMethod, sqlx::Error> {
    Ok(PaymentMethod {
        id: row.try_get("id")?,
        payment_method_key: row.try_get("payment_method_key")?,
        customer_id: row.try_get("customer_id")?,
        processor_token: row.try_get("processor_token")?,
        brand: row.try_get("brand")?,
        bin: row.try_get("bin")?,
        last4: row.try_get("last4")?,
        fingerprint: row.try_get("fingerprint")?,
        created_at: from_micros(row.try_get("created_at")?),
        attached_at: row
            .try_get::<Option<i64>, _>("attached_at")?
            .map(from_micros),
        processor_id: row.try_get("processor_id")?,
        expiry: row
            .try_get::<Option<i64>, _>("exp_month")?
            .zip(row.try_get::<Option<i64>, _>("exp_year")?),
        method_type: match &row.try_get::<String, _>("method_type")?[..] {
            "sepa_debit" => MethodType::SepaDebit,
            _ => MethodType::Card,
        },
    })
}

/// Saves a card. An attached card becomes the customer's payment method at once (the most
/// recently attached one is used); another waits for [`attach`].
pub async fn insert(
    tx: &mut Tx,
    new: NewPaymentMethod<'_>,
    now: DateTime<Utc>,
) -> Result<PaymentMethod, sqlx::Error> {
    let sql = format!(
        "INSERT INTO payment_methods (merchant_id, customer_id, payment_method_key, \
         processor_token, brand, bin, last4, fingerprint, created_at, attached_at, processor_id, \
         exp_month, exp_year, method_type) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING {COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(new.merchant_id)
        .bind(new.customer_id)
        .bind(&new.payment_method_key)
        .bind(new.processor_token)
        .bind(new.brand)
        .bind(new.bin)
        .bind(new.last4)
        .bind(new.fingerprint)
        .bind(to_micros(now))
        .bind(new.attached.then(|| to_micros(now)))
        .bind(new.processor_id)
        .bind(new.expiry.map(|(month, _)| month))
        .bind(new.expiry.map(|(_, year)| year))
        .bind(new.method_type.as_str())
        .fetch_one(&mut **tx)
        .await?;
    decode(&row)
}

/// Makes a waiting card the customer's payment method for renewals; an attached card stays as
/// it is.
pub async fn attach(
    tx: &mut Tx,
    merchant_id: i64,
    id: i64,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    attach_many(tx, &[(merchant_id, id)], now).await
}

/// [`attach`] for the cards with these `(merchant id, id)` pairs, in one statement.
pub async fn attach_many(
    tx: &mut Tx,
    ids: &[(i64, i64)],
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    if ids.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "UPDATE payment_methods SET attached_at = $1 FROM (VALUES {}) AS v \
         WHERE payment_methods.merchant_id = v.column1 AND payment_methods.id = v.column2 \
         AND payment_methods.attached_at IS NULL",
        super::placeholders(ids.len(), 2, 2)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql).bind(to_micros(now));
    for (merchant_id, id) in ids {
        query = query.bind(*merchant_id).bind(*id);
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

/// The customer's current payment method: the most recently attached card not detached.
pub async fn current<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    customer_id: i64,
) -> Result<Option<PaymentMethod>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM payment_methods WHERE merchant_id = $1 AND customer_id = $2 \
         AND attached_at IS NOT NULL AND detached_at IS NULL \
         ORDER BY attached_at DESC, id DESC LIMIT 1"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(customer_id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The payment method with this id, if it belongs to `merchant_id`.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    id: i64,
) -> Result<Option<PaymentMethod>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM payment_methods WHERE merchant_id = $1 AND id = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// [`current`] for the customers with these `(merchant id, customer id)` pairs, in one query:
/// each one's payment method, by customer id (customers without one are left out).
pub async fn current_many<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    customers: &[(i64, i64)],
) -> Result<HashMap<i64, PaymentMethod>, sqlx::Error> {
    if customers.is_empty() {
        return Ok(HashMap::new());
    }
    let sql = format!(
        "SELECT payment_methods.customer_id AS owner, {COLUMNS} FROM payment_methods \
         JOIN (VALUES {}) AS v \
         ON payment_methods.merchant_id = v.column1 AND payment_methods.customer_id = v.column2 \
         WHERE attached_at IS NOT NULL AND detached_at IS NULL \
         ORDER BY payment_methods.customer_id, attached_at DESC, id DESC",
        super::placeholders(customers.len(), 2, 1)
    );
    let mut query = sqlx::query(&sql);
    for (merchant_id, customer_id) in customers {
        query = query.bind(*merchant_id).bind(*customer_id);
    }
    let mut current = HashMap::new();
    for row in query.fetch_all(executor).await? {
        let owner: i64 = row.try_get("owner")?;
        if let std::collections::hash_map::Entry::Vacant(slot) = current.entry(owner) {
            slot.insert(decode(&row)?);
        }
    }
    Ok(current)
}

/// The cards with these `(merchant id, id)` pairs, by id.
pub async fn get_many<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    ids: &[(i64, i64)],
) -> Result<HashMap<i64, PaymentMethod>, sqlx::Error> {
    let rows = super::rows_by_ids(executor, "payment_methods", COLUMNS, ids).await?;
    rows.iter()
        .map(|row| decode(row).map(|card| (card.id, card)))
        .collect()
}
