//! The memberships usage events are for (DESIGN §19): read by key, or as the memberships of
//! customers that carry metered prices, with what an event's acceptance needs of them.

use recur_domain::calendar::Period;
use recur_domain::status::MembershipStatus;
use recur_domain::usage::MeteredTerm;
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::from_json;
use crate::store::from_micros;

/// A membership as usage events see it.
#[derive(Debug, Clone)]
pub struct MeteredMembership {
    /// Internal id.
    pub id: i64,
    /// `mmbrshp_…`.
    pub membership_key: String,
    /// Its customer's key.
    pub customer_key: String,
    /// Its status.
    pub status: MembershipStatus,
    /// The period it is in, once it has one.
    pub period: Option<Period>,
    /// ISO 4217 code.
    pub currency: String,
    /// The metered prices it carries.
    pub metered: Vec<MeteredTerm>,
}

const COLUMNS: &str = "m.id, m.membership_key, c.customer_key, m.status, \
     m.current_period_start, m.current_period_end, m.currency, m.metered_prices";

fn decode(row: &AnyRow) -> Result<MeteredMembership, sqlx::Error> {
    let status: String = row.try_get("status")?;
    let start: Option<i64> = row.try_get("current_period_start")?;
    let end: Option<i64> = row.try_get("current_period_end")?;
    Ok(MeteredMembership {
        id: row.try_get("id")?,
        membership_key: row.try_get("membership_key")?,
        customer_key: row.try_get("customer_key")?,
        status: MembershipStatus::parse(&status)
            .ok_or_else(|| sqlx::Error::Decode(format!("unknown status {status}").into()))?,
        period: start.zip(end).map(|(start, end)| Period {
            start: from_micros(start),
            end: from_micros(end),
        }),
        currency: row.try_get("currency")?,
        metered: from_json(row.try_get("metered_prices")?)?.unwrap_or_default(),
    })
}

/// `$first`, `$first + 1`, … for `n` values.
fn list(n: usize, first: usize) -> String {
    (first..first + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The merchant's memberships with these keys (distinct), in one statement.
pub async fn by_keys<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    keys: &[&str],
) -> Result<Vec<MeteredMembership>, sqlx::Error> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT {COLUMNS} FROM memberships m JOIN customers c ON c.id = m.customer_id \
         WHERE m.merchant_id = $1 AND m.membership_key IN ({})",
        list(keys.len(), 2)
    );
    let mut query = sqlx::query(&sql).bind(merchant_id);
    for key in keys {
        query = query.bind(*key);
    }
    let rows = query.fetch_all(executor).await?;
    rows.iter().map(decode).collect()
}

/// The memberships carrying metered prices of the merchant's customers with these keys
/// (distinct), in one statement.
pub async fn of_customers<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    customer_keys: &[&str],
) -> Result<Vec<MeteredMembership>, sqlx::Error> {
    if customer_keys.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT {COLUMNS} FROM customers c JOIN memberships m ON m.customer_id = c.id \
         WHERE c.merchant_id = $1 AND c.customer_key IN ({}) \
         AND m.metered_prices IS NOT NULL",
        list(customer_keys.len(), 2)
    );
    let mut query = sqlx::query(&sql).bind(merchant_id);
    for key in customer_keys {
        query = query.bind(*key);
    }
    let rows = query.fetch_all(executor).await?;
    rows.iter().map(decode).collect()
}
