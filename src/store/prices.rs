//! The `prices` table (DESIGN §15): what a product costs, per billing cycle, in one currency.
//! A price's terms never change once created; it is archived (`active`) and another created
//! instead. Every query is scoped by merchant id, and reads a price with its product.

use chrono::{DateTime, Utc};
use recur_domain::calendar::{BillingCycle, IntervalType};
use recur_domain::usage::meter::Aggregation;
use recur_domain::usage::pricing::MeteredPricing;
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::keyset::{self, Filters, Value, Window};
use super::products::Product;
use super::{from_micros, to_micros, Tx};

/// A price of the catalog, with what a membership made from it needs of its product.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogPrice {
    /// Internal id.
    pub id: i64,
    /// The merchant's id.
    pub merchant_id: i64,
    /// `price_…`.
    pub price_key: String,
    /// The product's internal id.
    pub product_id: i64,
    /// The product's key, `prod_…`.
    pub product_key: String,
    /// The product's name.
    pub product_name: String,
    /// Whether the product is active (an archived product's prices sell no new memberships).
    pub product_active: bool,
    /// ISO 4217 code, uppercase.
    pub currency: String,
    /// The price of one unit per cycle, in minor units of `currency`.
    pub unit_amount: i64,
    /// How often it is charged.
    pub cycle: BillingCycle,
    /// The free trial a membership made from it starts with, if any.
    pub trial_days: Option<u32>,
    /// Archived prices (`false`) sell no new memberships.
    pub active: bool,
    /// Creation time (the merchant's).
    pub created_at: DateTime<Utc>,
    /// For a metered price: its meter and pricing (`unit_amount` is then 0).
    pub metered: Option<MeteredPrice>,
}

/// What a metered price bills: its meter's usage, priced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeteredPrice {
    /// The meter's internal id.
    pub meter_id: i64,
    /// `mtr_…`.
    pub meter_key: String,
    /// The meter's code.
    pub meter_code: String,
    /// The meter's name.
    pub meter_name: String,
    /// The meter's aggregation.
    pub aggregation: Aggregation,
    /// The meter's property.
    pub property: Option<String>,
    /// Whether the meter is active.
    pub meter_active: bool,
    /// How a quantity is priced.
    pub pricing: MeteredPricing,
}

/// The terms of a new price.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPrice {
    /// `price_…`.
    pub price_key: String,
    /// ISO 4217 code, uppercase.
    pub currency: String,
    /// Minor units of `currency`, > 0.
    pub unit_amount: i64,
    /// The billing cycle.
    pub cycle: BillingCycle,
    /// The free trial, if any.
    pub trial_days: Option<u32>,
    /// For a metered price: the meter's internal id and the pricing (`unit_amount` 0).
    pub metered: Option<(i64, MeteredPricing)>,
}

/// What a list of prices keeps (all of the merchant's when empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only the prices of the merchant's product with this key (index `prices_by_product`);
    /// none for a key the merchant does not have.
    pub product_key: Option<String>,
    /// Only the active or the archived prices (index `prices_by_active`).
    pub active: Option<bool>,
}

/// A price's columns and its product's, read from `prices r JOIN products p`.
const COLUMNS: &str = "r.id, r.merchant_id, r.price_key, r.product_id, \
     p.product_key, p.name AS product_name, p.active AS product_active, r.currency, \
     r.unit_amount, r.interval_type, r.interval_count, r.trial_days, r.active, r.created_at, \
     r.meter_id, r.metered, t.meter_key, t.code AS meter_code, t.name AS meter_name, \
     t.aggregation AS meter_aggregation, t.property AS meter_property, \
     t.active AS meter_active";

/// The join every read goes through: a price with its product and its meter (a metered
/// price's), of the same merchant.
const FROM: &str = "FROM prices r JOIN products p ON p.id = r.product_id \
     AND p.merchant_id = r.merchant_id LEFT JOIN meters t ON t.id = r.meter_id \
     AND t.merchant_id = r.merchant_id";

/// The most prices [`active_of_product`] returns.
pub const MAX_ACTIVE_OF_PRODUCT: i64 = 100;

fn decode(row: &AnyRow) -> Result<CatalogPrice, sqlx::Error> {
    let invalid = |e: String| sqlx::Error::Decode(e.into());
    let interval_type: String = row.try_get("interval_type")?;
    let interval_type = IntervalType::parse(&interval_type).map_err(|e| invalid(e.to_string()))?;
    let count = u32::try_from(row.try_get::<i64, _>("interval_count")?)
        .map_err(|e| invalid(e.to_string()))?;
    let cycle = BillingCycle::new(interval_type, count).map_err(|e| invalid(e.to_string()))?;
    let trial_days = row
        .try_get::<Option<i64>, _>("trial_days")?
        .map(u32::try_from)
        .transpose()
        .map_err(|e| invalid(e.to_string()))?;
    Ok(CatalogPrice {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        price_key: row.try_get("price_key")?,
        product_id: row.try_get("product_id")?,
        product_key: row.try_get("product_key")?,
        product_name: row.try_get("product_name")?,
        product_active: row.try_get::<i64, _>("product_active")? == 1,
        currency: row.try_get("currency")?,
        unit_amount: row.try_get("unit_amount")?,
        cycle,
        trial_days,
        active: row.try_get::<i64, _>("active")? == 1,
        created_at: from_micros(row.try_get("created_at")?),
        metered: decode_metered(row)?,
    })
}

/// A metered price's meter and pricing; `None` for a fixed price.
fn decode_metered(row: &AnyRow) -> Result<Option<MeteredPrice>, sqlx::Error> {
    let invalid = |e: String| sqlx::Error::Decode(e.into());
    let (Some(meter_id), Some(pricing)) = (
        row.try_get::<Option<i64>, _>("meter_id")?,
        row.try_get::<Option<String>, _>("metered")?,
    ) else {
        return Ok(None);
    };
    let aggregation: String = row.try_get("meter_aggregation")?;
    Ok(Some(MeteredPrice {
        meter_id,
        meter_key: row.try_get("meter_key")?,
        meter_code: row.try_get("meter_code")?,
        meter_name: row.try_get("meter_name")?,
        aggregation: Aggregation::parse(&aggregation).map_err(invalid)?,
        property: row.try_get("meter_property")?,
        meter_active: row.try_get::<i64, _>("meter_active")? == 1,
        pricing: serde_json::from_str(&pricing).map_err(|e| invalid(e.to_string()))?,
    }))
}

/// Stores a new active price of `product` (a product of `merchant_id`, read with
/// [`super::products::locked`] in the same transaction; a metered price's meter too), and reads
/// it back with its product and meter.
pub async fn insert(
    tx: &mut Tx,
    merchant_id: i64,
    product: &Product,
    new: &NewPrice,
    now: DateTime<Utc>,
) -> Result<CatalogPrice, sqlx::Error> {
    let metered = new
        .metered
        .as_ref()
        .map(|(_, pricing)| serde_json::to_string(pricing))
        .transpose()
        .map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    sqlx::query(
        "INSERT INTO prices (merchant_id, product_id, price_key, currency, unit_amount, \
         interval_type, interval_count, trial_days, active, created_at, meter_id, metered) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $10, $11)",
    )
    .bind(merchant_id)
    .bind(product.id)
    .bind(new.price_key.as_str())
    .bind(new.currency.as_str())
    .bind(new.unit_amount)
    .bind(new.cycle.interval_type.as_str())
    .bind(i64::from(new.cycle.interval_count))
    .bind(new.trial_days.map(i64::from))
    .bind(to_micros(now))
    .bind(new.metered.as_ref().map(|(meter_id, _)| *meter_id))
    .bind(metered)
    .execute(&mut **tx)
    .await?;
    by_key(&mut **tx, merchant_id, &new.price_key)
        .await?
        .ok_or_else(|| sqlx::Error::RowNotFound)
}

/// The merchant's price with this key, with its product.
pub async fn by_key<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    price_key: &str,
) -> Result<Option<CatalogPrice>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} {FROM} WHERE r.merchant_id = $1 AND r.price_key = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(price_key)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The active prices of the merchant's product `product_id`, oldest first, at most
/// [`MAX_ACTIVE_OF_PRODUCT`] (read off index `prices_by_product`), metered prices left out:
/// what a customer may switch to.
pub async fn active_of_product<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    product_id: i64,
) -> Result<Vec<CatalogPrice>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE r.merchant_id = $1 AND r.product_id = $2 \
         AND r.active = 1 AND r.meter_id IS NULL ORDER BY r.id LIMIT $3"
    );
    let rows = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(product_id)
        .bind(MAX_ACTIVE_OF_PRODUCT)
        .fetch_all(executor)
        .await?;
    rows.iter().map(decode).collect()
}

/// The newest prices of each of the merchant's products `product_ids`, at most `each` a product
/// (archived ones too), by product and newest first, in one statement: what the dashboard's
/// catalog page shows under a page of products. Each product's are read off
/// `prices_by_product`.
pub async fn newest_of_products<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    product_ids: &[i64],
    each: i64,
) -> Result<Vec<CatalogPrice>, sqlx::Error> {
    if product_ids.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders: Vec<String> = (0..product_ids.len())
        .map(|n| format!("${}", n + 3))
        .collect();
    let sql = format!(
        "SELECT {COLUMNS} FROM (SELECT q.*, ROW_NUMBER() OVER \
         (PARTITION BY q.product_id ORDER BY q.id DESC) AS nth FROM prices q \
         WHERE q.merchant_id = $1 AND q.product_id IN ({})) r \
         JOIN products p ON p.id = r.product_id AND p.merchant_id = r.merchant_id \
         LEFT JOIN meters t ON t.id = r.meter_id AND t.merchant_id = r.merchant_id \
         WHERE r.nth <= $2 ORDER BY r.product_id, r.id DESC",
        placeholders.join(", ")
    );
    let mut query = sqlx::query(&sql).bind(merchant_id).bind(each);
    for id in product_ids {
        query = query.bind(*id);
    }
    let rows = query.fetch_all(executor).await?;
    rows.iter().map(decode).collect()
}

/// A page of the merchant's prices that `filter` keeps, newest first ([`keyset`]).
///
/// With a product, its prices are read off `prices_by_product` and `active` is tested on them
/// (written `+r.active`, no index key, so that SQLite, which recur never analyses, does not
/// walk `prices_by_active` instead).
pub async fn page<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    filter: &Filter,
    window: Window,
) -> Result<Vec<CatalogPrice>, sqlx::Error> {
    let mut filters = Filters::default();
    if let Some(key) = &filter.product_key {
        filters.and(vec![Value::Text(key.clone())], |p| {
            format!(
                "r.product_id = (SELECT k.id FROM products k \
                 WHERE k.merchant_id = $1 AND k.product_key = {})",
                p[0]
            )
        });
    }
    if let Some(active) = filter.active {
        let plus = if filter.product_key.is_some() {
            "+"
        } else {
            ""
        };
        filters.and(vec![Value::Int(i64::from(active))], |p| {
            format!("{plus}r.active = {}", p[0])
        });
    }
    let select = format!("SELECT {COLUMNS} {FROM}");
    let rows = keyset::page(executor, &select, "r", merchant_id, &filters, window).await?;
    rows.iter().map(decode).collect()
}

/// Archives (`false`) or restores the merchant's price, in one statement: whether the merchant
/// has it.
pub async fn set_active(
    tx: &mut Tx,
    merchant_id: i64,
    price_key: &str,
    active: bool,
) -> Result<bool, sqlx::Error> {
    let done =
        sqlx::query("UPDATE prices SET active = $3 WHERE merchant_id = $1 AND price_key = $2")
            .bind(merchant_id)
            .bind(price_key)
            .bind(i64::from(active))
            .execute(&mut **tx)
            .await?;
    Ok(done.rows_affected() == 1)
}
