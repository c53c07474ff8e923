//! The `products` table (DESIGN §15): a merchant's products, which its prices belong to.
//! Archivable (`active`), never deleted. Every query is scoped by merchant id.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::keyset::{self, Filters, Value, Window};
use super::{from_micros, to_micros, Backend, Tx};

/// A stored product.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Product {
    /// Internal id.
    pub id: i64,
    /// `prod_…`.
    pub product_key: String,
    /// What customers see it called.
    pub name: String,
    /// The merchant's description, if any.
    pub description: Option<String>,
    /// Archived products (`false`) take no new prices.
    pub active: bool,
    /// Creation time (the merchant's).
    pub created_at: DateTime<Utc>,
    /// When a change last altered it.
    pub updated_at: DateTime<Utc>,
}

/// A product's changes; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// A new name.
    pub name: Option<String>,
    /// A new description (`Some(None)`: none).
    pub description: Option<Option<String>>,
    /// Active or archived.
    pub active: Option<bool>,
}

const COLUMNS: &str = "p.id, p.product_key, p.name, p.description, p.active, p.created_at, \
     p.updated_at";

fn decode(row: &AnyRow) -> Result<Product, sqlx::Error> {
    Ok(Product {
        id: row.try_get("id")?,
        product_key: row.try_get("product_key")?,
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        active: row.try_get::<i64, _>("active")? == 1,
        created_at: from_micros(row.try_get("created_at")?),
        updated_at: from_micros(row.try_get("updated_at")?),
    })
}

/// Stores a new active product of `merchant_id`.
pub async fn insert<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    product_key: &str,
    name: &str,
    description: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Product, sqlx::Error> {
    let sql = format!(
        "INSERT INTO products (merchant_id, product_key, name, description, active, created_at, \
         updated_at) VALUES ($1, $2, $3, $4, 1, $5, $5) RETURNING {}",
        COLUMNS.replace("p.", "")
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(product_key)
        .bind(name)
        .bind(description)
        .bind(to_micros(now))
        .fetch_one(executor)
        .await?;
    decode(&row)
}

/// The merchant's product with this key.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    product_key: &str,
) -> Result<Option<Product>, sqlx::Error> {
    let sql =
        format!("SELECT {COLUMNS} FROM products p WHERE p.merchant_id = $1 AND p.product_key = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(product_key)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The merchant's product with this key, locked for the rest of the transaction (PostgreSQL;
/// SQLite's write transaction holds the database lock already): a price created under it is
/// ordered with a concurrent archiving ([`update`] locks the row too).
pub async fn locked(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: i64,
    product_key: &str,
) -> Result<Option<Product>, sqlx::Error> {
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM products p WHERE p.merchant_id = $1 AND p.product_key = $2{lock}"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(product_key)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// A page of the merchant's products, newest first ([`keyset`]); only the active or the archived
/// ones when `active` is given (index `products_by_active`).
pub async fn page<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    active: Option<bool>,
    window: Window,
) -> Result<Vec<Product>, sqlx::Error> {
    let mut filters = Filters::default();
    if let Some(active) = active {
        filters.and(vec![Value::Int(i64::from(active))], |p| {
            format!("p.active = {}", p[0])
        });
    }
    let select = format!("SELECT {COLUMNS} FROM products p");
    let rows = keyset::page(executor, &select, "p", merchant_id, &filters, window).await?;
    rows.iter().map(decode).collect()
}

/// Applies `changes` to the merchant's product in one statement: the product as changed, or
/// `None` when the merchant has no such product. `updated_at` moves to `now` only when a value
/// changes (repeating the current one is no change).
pub async fn update<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    product_key: &str,
    changes: &Changes,
    now: DateTime<Utc>,
) -> Result<Option<Product>, sqlx::Error> {
    let sql = format!(
        "UPDATE products SET name = COALESCE($3, name), \
         description = CASE WHEN $4 = 1 THEN $5 ELSE description END, \
         active = COALESCE($6, active), \
         updated_at = CASE WHEN COALESCE($3, name) <> name \
             OR ($4 = 1 AND $5 IS DISTINCT FROM description) \
             OR COALESCE($6, active) <> active THEN $7 ELSE updated_at END \
         WHERE merchant_id = $1 AND product_key = $2 RETURNING {}",
        COLUMNS.replace("p.", "")
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(product_key)
        .bind(changes.name.as_deref())
        .bind(i64::from(changes.description.is_some()))
        .bind(changes.description.clone().flatten())
        .bind(changes.active.map(i64::from))
        .bind(to_micros(now))
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}
