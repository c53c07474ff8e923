//! The `memberships` table. Every query is scoped by merchant id, or by a membership id that was
//! read under one.
//!
//! The engine changes a membership by locking its row ([`lock`]), changing the struct in memory
//! and writing it back with [`save`], which also checks the row's `version`: a write based on a
//! stale read fails instead of overwriting someone else's change. The submodules hold the
//! statements of one role each: `create` inserts memberships, `with_invoices` reads a
//! membership with its invoices for the API, `claims` claims the engine's due work.

mod claims;
mod create;
mod with_invoices;

pub use claims::{any_due, claim_due, claim_due_renewals};
pub use create::{create_or_get, insert, ClockCondition, CreatedAt, Insert, NewMembership, NewRow};
pub use with_invoices::{get_with_invoices, WithInvoicesByKey};

use chrono::{DateTime, Utc};
use recur_domain::calendar::{BillingCycle, IntervalType, Period};
use recur_domain::membership::ChargeDirective;
use recur_domain::money::Currency;
use recur_domain::price::Price;
use recur_domain::status::MembershipStatus;
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::{from_micros, to_micros, Backend, Tx};

/// A membership as stored.
#[derive(Debug, Clone)]
pub struct Membership {
    /// Internal id.
    pub id: i64,
    /// Owning merchant.
    pub merchant_id: i64,
    /// Owning customer's internal id.
    pub customer_id: i64,
    /// Owning customer's key.
    pub customer_key: String,
    /// Public key, `mmbrshp_…`.
    pub membership_key: String,
    /// `productInfo.orderId`, unique per customer.
    pub order_id: String,
    /// `productInfo.description`.
    pub order_description: Option<String>,
    /// `subscriptionName`.
    pub subscription_name: String,
    /// Merchant's free-form string.
    pub metadata: Option<String>,
    /// Where events are posted.
    pub webhook_url: String,
    /// Where the customer is sent after an update or checkout.
    pub return_to_website_link: Option<String>,
    /// No cycle starts at or after this instant.
    pub end_date: Option<DateTime<Utc>>,
    /// ISO 4217 code.
    pub currency: String,
    /// `totalAmount` in minor units: the price per period.
    pub total_amount: i64,
    /// `pricePerUnit` in minor units, when given.
    pub price_per_unit: Option<i64>,
    /// `quantity`, when given.
    pub quantity: Option<i64>,
    /// Daily, Weekly, Monthly or Annually.
    pub interval_type: IntervalType,
    /// Units of `interval_type` per cycle.
    pub interval_count: u32,
    /// Forced outcomes of recurring attempts (sandbox testing).
    pub charge_emitter_queue: Option<Vec<ChargeDirective>>,
    /// Recurring charge attempts made so far (the queue's position).
    pub recurring_attempts: i64,
    /// Lifecycle status.
    pub status: MembershipStatus,
    /// Current billing period, once the first payment started it.
    pub current_period: Option<Period>,
    /// Credit in minor units, applied first at every charge.
    pub credit_balance: i64,
    /// When the renewal charge that started dunning failed.
    pub dunning_failed_at: Option<DateTime<Utc>>,
    /// Dunning retries made since then.
    pub dunning_retries: i64,
    /// When the engine must next look at this membership; `None` when nothing is scheduled.
    pub next_action_at: Option<DateTime<Utc>>,
    /// Optimistic-concurrency counter, bumped by every [`save`].
    pub version: i64,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// When it was canceled.
    pub canceled_at: Option<DateTime<Utc>>,
}

impl Membership {
    /// The plan's price: `totalAmount` per period, with the parts it was given as.
    pub fn price(&self) -> Price {
        Price {
            total: self.total_amount,
            per_unit: self.price_per_unit,
            quantity: self.quantity,
        }
    }

    /// The billing cycle.
    pub fn cycle(&self) -> BillingCycle {
        BillingCycle {
            interval_type: self.interval_type,
            interval_count: self.interval_count,
        }
    }

    /// The currency (stored codes were validated on the way in).
    pub fn currency(&self) -> Currency {
        Currency::parse(&self.currency)
            .unwrap_or_else(|_| Currency::parse("USD").expect("USD is an ISO 4217 currency"))
    }
}

pub(super) const COLUMNS: &str =
    "m.id, m.merchant_id, m.customer_id, c.customer_key, m.membership_key, \
    m.order_id, m.order_description, m.subscription_name, m.metadata, m.webhook_url, \
    m.return_to_website_link, m.end_date, m.currency, m.total_amount, m.price_per_unit, \
    m.quantity, m.interval_type, m.interval_count, m.charge_emitter_queue, m.recurring_attempts, \
    m.status, m.current_period_start, m.current_period_end, m.credit_balance, \
    m.dunning_failed_at, m.dunning_retries, m.next_action_at, m.version, m.created_at, \
    m.updated_at, m.canceled_at";

pub(super) const FROM: &str = "FROM memberships m JOIN customers c ON c.id = m.customer_id";

fn decode_error(message: String) -> sqlx::Error {
    sqlx::Error::Decode(message.into())
}

pub(super) fn decode(row: &AnyRow) -> Result<Membership, sqlx::Error> {
    let time = |name: &str| -> Result<Option<DateTime<Utc>>, sqlx::Error> {
        Ok(row.try_get::<Option<i64>, _>(name)?.map(from_micros))
    };
    let interval_type: String = row.try_get("interval_type")?;
    let status: String = row.try_get("status")?;
    let queue: Option<String> = row.try_get("charge_emitter_queue")?;
    let current_period = match (time("current_period_start")?, time("current_period_end")?) {
        (Some(start), Some(end)) => Some(Period { start, end }),
        _ => None,
    };
    Ok(Membership {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        customer_id: row.try_get("customer_id")?,
        customer_key: row.try_get("customer_key")?,
        membership_key: row.try_get("membership_key")?,
        order_id: row.try_get("order_id")?,
        order_description: row.try_get("order_description")?,
        subscription_name: row.try_get("subscription_name")?,
        metadata: row.try_get("metadata")?,
        webhook_url: row.try_get("webhook_url")?,
        return_to_website_link: row.try_get("return_to_website_link")?,
        end_date: time("end_date")?,
        currency: row.try_get("currency")?,
        total_amount: row.try_get("total_amount")?,
        price_per_unit: row.try_get("price_per_unit")?,
        quantity: row.try_get("quantity")?,
        interval_type: IntervalType::parse(&interval_type)
            .map_err(|e| decode_error(e.to_string()))?,
        interval_count: u32::try_from(row.try_get::<i64, _>("interval_count")?)
            .map_err(|e| decode_error(e.to_string()))?,
        charge_emitter_queue: queue
            .map(|q| serde_json::from_str(&q))
            .transpose()
            .map_err(|e| decode_error(e.to_string()))?,
        recurring_attempts: row.try_get("recurring_attempts")?,
        status: MembershipStatus::parse(&status)
            .ok_or_else(|| decode_error(format!("unknown status {status}")))?,
        current_period,
        credit_balance: row.try_get("credit_balance")?,
        dunning_failed_at: time("dunning_failed_at")?,
        dunning_retries: row.try_get("dunning_retries")?,
        next_action_at: time("next_action_at")?,
        version: row.try_get("version")?,
        created_at: from_micros(row.try_get("created_at")?),
        updated_at: from_micros(row.try_get("updated_at")?),
        canceled_at: time("canceled_at")?,
    })
}

pub(super) fn queue_json(
    queue: &Option<Vec<ChargeDirective>>,
) -> Result<Option<String>, sqlx::Error> {
    queue
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| sqlx::Error::Encode(Box::new(e)))
}

/// The membership with this key, if it belongs to `merchant_id`.
pub async fn get<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    membership_key: &str,
) -> Result<Option<Membership>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} {FROM} WHERE m.merchant_id = $1 AND m.membership_key = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(membership_key)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The customer's memberships, newest first.
pub async fn for_customer<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    customer_id: i64,
) -> Result<Vec<Membership>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE m.merchant_id = $1 AND m.customer_id = $2 ORDER BY m.id DESC"
    );
    let rows = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(customer_id)
        .fetch_all(executor)
        .await?;
    rows.iter().map(decode).collect()
}

/// The membership with this internal id, if it belongs to `merchant_id`.
pub async fn by_id<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    id: i64,
) -> Result<Option<Membership>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} {FROM} WHERE m.merchant_id = $1 AND m.id = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Reads the membership with this key for change, locking its row until the transaction ends
/// (PostgreSQL; on SQLite the transaction already holds the database's write lock).
pub async fn lock(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: i64,
    membership_key: &str,
) -> Result<Option<Membership>, sqlx::Error> {
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE OF m",
        Backend::Sqlite => "",
    };
    let sql =
        format!("SELECT {COLUMNS} {FROM} WHERE m.merchant_id = $1 AND m.membership_key = $2{lock}");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(membership_key)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Writes back every changeable column of `m` if the row still has `m.version`, and bumps the
/// version. Returns `false` (and writes nothing) when the row changed since it was read.
pub async fn save(
    tx: &mut Tx,
    m: &mut Membership,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    save_many(tx, &mut [m], now).await
}

/// [`save`] for many memberships in one statement. Returns `false` when any row changed since
/// it was read; the caller must then roll back, as some rows may have been written.
pub async fn save_many(
    tx: &mut Tx,
    memberships: &mut [&mut Membership],
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    if memberships.is_empty() {
        return Ok(true);
    }
    const COLUMNS: usize = 21;
    let sql = format!(
        "UPDATE memberships SET subscription_name = v.column4, metadata = v.column5, \
         return_to_website_link = v.column6, end_date = v.column7, total_amount = v.column8, \
         price_per_unit = v.column9, quantity = v.column10, interval_type = v.column11, \
         interval_count = v.column12, recurring_attempts = v.column13, status = v.column14, \
         current_period_start = v.column15, current_period_end = v.column16, \
         credit_balance = v.column17, dunning_failed_at = v.column18, \
         dunning_retries = v.column19, next_action_at = v.column20, canceled_at = v.column21, \
         updated_at = $1, version = memberships.version + 1 \
         FROM (VALUES {}) AS v \
         WHERE memberships.id = v.column1 AND memberships.merchant_id = v.column2 \
         AND memberships.version = v.column3",
        super::placeholders(memberships.len(), COLUMNS, 2)
    );
    let mut query = sqlx::query(&sql).bind(to_micros(now));
    for m in memberships.iter() {
        query = query
            .bind(m.id)
            .bind(m.merchant_id)
            .bind(m.version)
            .bind(m.subscription_name.clone())
            .bind(m.metadata.clone())
            .bind(m.return_to_website_link.clone())
            .bind(m.end_date.map(to_micros))
            .bind(m.total_amount)
            .bind(m.price_per_unit)
            .bind(m.quantity)
            .bind(m.interval_type.as_str())
            .bind(i64::from(m.interval_count))
            .bind(m.recurring_attempts)
            .bind(m.status.as_str())
            .bind(m.current_period.map(|p| to_micros(p.start)))
            .bind(m.current_period.map(|p| to_micros(p.end)))
            .bind(m.credit_balance)
            .bind(m.dunning_failed_at.map(to_micros))
            .bind(m.dunning_retries)
            .bind(m.next_action_at.map(to_micros))
            .bind(m.canceled_at.map(to_micros));
    }
    let updated = query.execute(&mut **tx).await?.rows_affected();
    let all = usize::try_from(updated).is_ok_and(|n| n == memberships.len());
    if all {
        for m in memberships.iter_mut() {
            m.version += 1;
            m.updated_at = now;
        }
    }
    Ok(all)
}

/// Reads the memberships with these `(merchant id, id)` pairs for change, locking their rows
/// like [`lock`] (in id order, so two lockers never wait on each other in a cycle).
pub async fn lock_many(
    tx: &mut Tx,
    backend: Backend,
    ids: &[(i64, i64)],
) -> Result<Vec<Membership>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let lock = match backend {
        Backend::Postgres => " FOR UPDATE OF m",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT {COLUMNS} {FROM} JOIN (VALUES {}) AS v \
         ON m.merchant_id = v.column1 AND m.id = v.column2 ORDER BY m.id{lock}",
        super::placeholders(ids.len(), 2, 1)
    );
    let mut query = sqlx::query(&sql);
    for (merchant_id, id) in ids {
        query = query.bind(*merchant_id).bind(*id);
    }
    let rows = query.fetch_all(&mut **tx).await?;
    rows.iter().map(decode).collect()
}
