//! The `customers` table. Every query is scoped by merchant id.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::{from_micros, to_micros, Pool, Store, Tx};

/// A tax id of a customer, kept as given.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TaxId {
    /// Kind of id (`eu_vat`, `us_ein`, …): not validated, as the spec gives no rule.
    #[serde(rename = "type")]
    pub kind: String,
    /// The id itself.
    pub value: String,
}

/// The fields a customer is created with, already validated and normalised.
#[derive(Debug, Clone)]
pub struct NewCustomer {
    /// Processor key (lowercase UUID) of the merchant.
    pub processor_key: String,
    /// Given name.
    pub first_name: String,
    /// Family name.
    pub last_name: String,
    /// E-mail as given.
    pub email: String,
    /// E-mail as compared (lowercase).
    pub email_identity: String,
    /// E.164 phone.
    pub phone: String,
    /// ISO 3166-1 alpha-2, uppercase.
    pub country_code: String,
    /// Optional address line 1.
    pub address1: Option<String>,
    /// Optional address line 2.
    pub address2: Option<String>,
    /// Optional city.
    pub city: Option<String>,
    /// Optional state or region.
    pub state: Option<String>,
    /// Optional postal code.
    pub zip_code: Option<String>,
    /// Tax ids.
    pub tax_ids: Vec<TaxId>,
}

/// A stored customer.
#[derive(Debug, Clone)]
pub struct Customer {
    /// Internal id.
    pub id: i64,
    /// Public key, `cstmr_…`.
    pub customer_key: String,
    /// Everything it was created with (phone as last updated).
    pub fields: NewCustomer,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

/// Whether a create made a new row or found the existing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    /// A new customer was stored.
    New,
    /// A customer with that e-mail already existed; it is returned unchanged.
    Existing,
}

const COLUMNS: &str =
    "id, customer_key, processor_key, first_name, last_name, email, email_identity, \
                       phone, country_code, address1, address2, city, state, zip_code, tax_ids, \
                       created_at, updated_at";

fn decode(row: &sqlx::any::AnyRow) -> Result<Customer, sqlx::Error> {
    use sqlx::Row;
    let tax_ids: String = row.try_get("tax_ids")?;
    Ok(Customer {
        id: row.try_get("id")?,
        customer_key: row.try_get("customer_key")?,
        fields: NewCustomer {
            processor_key: row.try_get("processor_key")?,
            first_name: row.try_get("first_name")?,
            last_name: row.try_get("last_name")?,
            email: row.try_get("email")?,
            email_identity: row.try_get("email_identity")?,
            phone: row.try_get("phone")?,
            country_code: row.try_get("country_code")?,
            address1: row.try_get("address1")?,
            address2: row.try_get("address2")?,
            city: row.try_get("city")?,
            state: row.try_get("state")?,
            zip_code: row.try_get("zip_code")?,
            tax_ids: serde_json::from_str(&tax_ids)
                .map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        },
        created_at: from_micros(row.try_get("created_at")?),
        updated_at: from_micros(row.try_get("updated_at")?),
    })
}

/// Stores `customer` for `merchant_id` unless one with the same e-mail identity exists, in which
/// case the existing one is returned. Safe under concurrent identical creates: the unique
/// constraint decides, and the loser reads the winner's row. A new customer is one statement
/// (its own transaction outside a `Tx`), an existing one a second read.
pub async fn create_or_get(
    writer: &Pool,
    merchant_id: i64,
    customer_key: &str,
    customer: &NewCustomer,
    now: DateTime<Utc>,
) -> Result<(Customer, Created), sqlx::Error> {
    let tax_ids =
        serde_json::to_string(&customer.tax_ids).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    let sql = format!(
        "INSERT INTO customers (merchant_id, customer_key, processor_key, first_name, last_name, \
         email, email_identity, phone, country_code, address1, address2, city, state, zip_code, \
         tax_ids, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16) \
         ON CONFLICT (merchant_id, email_identity) DO NOTHING RETURNING {COLUMNS}"
    );
    let inserted = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(customer_key)
        .bind(&customer.processor_key)
        .bind(&customer.first_name)
        .bind(&customer.last_name)
        .bind(&customer.email)
        .bind(&customer.email_identity)
        .bind(&customer.phone)
        .bind(&customer.country_code)
        .bind(&customer.address1)
        .bind(&customer.address2)
        .bind(&customer.city)
        .bind(&customer.state)
        .bind(&customer.zip_code)
        .bind(tax_ids)
        .bind(to_micros(now))
        .fetch_optional(writer)
        .await?;
    if let Some(row) = inserted {
        return Ok((decode(&row)?, Created::New));
    }
    let sql =
        format!("SELECT {COLUMNS} FROM customers WHERE merchant_id = $1 AND email_identity = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(&customer.email_identity)
        .fetch_one(writer)
        .await?;
    Ok((decode(&row)?, Created::Existing))
}

/// The customer with this key, if it belongs to `merchant_id`.
pub async fn get(
    store: &Store,
    merchant_id: i64,
    customer_key: &str,
) -> Result<Option<Customer>, sqlx::Error> {
    let sql =
        format!("SELECT {COLUMNS} FROM customers WHERE merchant_id = $1 AND customer_key = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(customer_key)
        .fetch_optional(store.pool())
        .await?;
    row.as_ref().map(decode).transpose()
}

/// [`get`] together with the merchant's test-clock time (`None` without a test clock), in one
/// statement; `None` when there is no such customer.
pub async fn get_with_test_clock(
    store: &Store,
    merchant_id: i64,
    customer_key: &str,
) -> Result<Option<(Customer, Option<DateTime<Utc>>)>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS}, (SELECT t.now FROM test_clocks t WHERE t.merchant_id = $1) \
         AS test_clock_now FROM customers WHERE merchant_id = $1 AND customer_key = $2"
    );
    let Some(row) = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(customer_key)
        .fetch_optional(store.pool())
        .await?
    else {
        return Ok(None);
    };
    let clock: Option<i64> = sqlx::Row::try_get(&row, "test_clock_now")?;
    Ok(Some((decode(&row)?, clock.map(from_micros))))
}

/// Sets the phone of the customer with this key, if it belongs to `merchant_id`, and returns the
/// updated customer.
pub async fn update_phone(
    tx: &mut Tx,
    merchant_id: i64,
    customer_key: &str,
    phone: &str,
    now: DateTime<Utc>,
) -> Result<Option<Customer>, sqlx::Error> {
    let sql = format!(
        "UPDATE customers SET phone = $1, updated_at = $2 \
         WHERE merchant_id = $3 AND customer_key = $4 RETURNING {COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(phone)
        .bind(to_micros(now))
        .bind(merchant_id)
        .bind(customer_key)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The customer with this internal id, if it belongs to `merchant_id`.
pub async fn by_id<'c, E: sqlx::Executor<'c, Database = sqlx::Any>>(
    executor: E,
    merchant_id: i64,
    id: i64,
) -> Result<Option<Customer>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM customers WHERE merchant_id = $1 AND id = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The customers with these `(merchant id, id)` pairs, by id.
pub async fn by_ids<'c, E: sqlx::Executor<'c, Database = sqlx::Any>>(
    executor: E,
    ids: &[(i64, i64)],
) -> Result<HashMap<i64, Customer>, sqlx::Error> {
    let rows = super::rows_by_ids(executor, "customers", COLUMNS, ids).await?;
    rows.iter()
        .map(|row| decode(row).map(|customer| (customer.id, customer)))
        .collect()
}
