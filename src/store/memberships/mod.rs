//! The `memberships` table. Every query is scoped by merchant id, or by a membership id that was
//! read under one.
//!
//! The engine changes a membership by locking its row ([`lock`]), changing the struct in memory
//! and writing it back with [`save_many`], which also checks the row's `version`: a write based on a
//! stale read fails instead of overwriting someone else's change. The submodules hold the
//! statements of one role each: `create` inserts memberships, `with_invoices` reads a
//! membership with its invoices for the API, `claims` claims the engine's due work, `list`
//! reads the merchant's list a page at a time.

mod claims;
mod create;
pub mod list;
pub mod metered;
mod with_invoices;

pub use claims::{claim_due, claim_due_renewals, earliest_due};
pub use create::{
    by_order, create_or_get, insert, insert_in, ClockCondition, CreatedAt, Insert, NewMembership,
    NewRow,
};
pub use with_invoices::{get_with_invoices, WithInvoicesByKey};

use chrono::{DateTime, Utc};
use recur_domain::calendar::{BillingCycle, IntervalType, Period};
use recur_domain::coupon::Discount;
use recur_domain::membership::{ChargeDirective, MembershipState, ScheduledChange};
use recur_domain::money::Currency;
use recur_domain::price::Price;
use recur_domain::status::MembershipStatus;
use recur_domain::tax::TaxRate;
use recur_domain::usage::MeteredTerm;
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::{from_micros, to_micros, Backend, Tx};

/// A membership as stored: who it belongs to, what it is for, and its billing state.
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
    /// ISO 4217 code.
    pub currency: String,
    /// Status, price, cycle, period, credit, dunning and schedule: what the billing rules read
    /// and change.
    pub state: MembershipState,
    /// The tax rates it bills with, as they were when given (`taxRateIds`, in order).
    pub tax_rates: Vec<TaxRate>,
    /// The catalog price (`price_…`) its terms come from; `None` for inline `pricingInfo`.
    pub price_key: Option<String>,
    /// The metered prices it carries, one per meter, as they were when given (DESIGN §19).
    pub metered: Vec<MeteredTerm>,
    /// Optimistic-concurrency counter, bumped by every [`save_many`].
    pub version: i64,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

impl Membership {
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
    m.updated_at, m.canceled_at, m.tax_rates, m.price_key, m.trial_days, m.trial_end, \
    m.trial_notice_at, m.discount, m.period_discount, m.resume_at, m.scheduled_change, \
    m.metered_prices";

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
    let tax_rates: String = row.try_get("tax_rates")?;
    let discount: Option<String> = row.try_get("discount")?;
    let scheduled: Option<String> = row.try_get("scheduled_change")?;
    let metered: Option<String> = row.try_get("metered_prices")?;
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
        currency: row.try_get("currency")?,
        state: MembershipState {
            status: MembershipStatus::parse(&status)
                .ok_or_else(|| decode_error(format!("unknown status {status}")))?,
            price: Price {
                total: row.try_get("total_amount")?,
                per_unit: row.try_get("price_per_unit")?,
                quantity: row.try_get("quantity")?,
            },
            cycle: BillingCycle {
                interval_type: IntervalType::parse(&interval_type)
                    .map_err(|e| decode_error(e.to_string()))?,
                interval_count: u32::try_from(row.try_get::<i64, _>("interval_count")?)
                    .map_err(|e| decode_error(e.to_string()))?,
            },
            end_date: time("end_date")?,
            current_period,
            credit_balance: row.try_get("credit_balance")?,
            dunning_failed_at: time("dunning_failed_at")?,
            dunning_retries: row.try_get("dunning_retries")?,
            next_action_at: time("next_action_at")?,
            charge_emitter_queue: queue
                .map(|q| serde_json::from_str(&q))
                .transpose()
                .map_err(|e| decode_error(e.to_string()))?,
            recurring_attempts: row.try_get("recurring_attempts")?,
            canceled_at: time("canceled_at")?,
            trial_days: row
                .try_get::<Option<i64>, _>("trial_days")?
                .map(|days| u32::try_from(days).map_err(|e| decode_error(e.to_string())))
                .transpose()?,
            trial_end: time("trial_end")?,
            trial_notice_at: time("trial_notice_at")?,
            discount: from_json(discount)?,
            period_discount: row.try_get("period_discount")?,
            resume_at: time("resume_at")?,
            scheduled: from_json(scheduled)?,
        },
        tax_rates: serde_json::from_str(&tax_rates).map_err(|e| decode_error(e.to_string()))?,
        price_key: row.try_get("price_key")?,
        metered: from_json(metered)?.unwrap_or_default(),
        version: row.try_get("version")?,
        created_at: from_micros(row.try_get("created_at")?),
        updated_at: from_micros(row.try_get("updated_at")?),
    })
}

/// A JSON column holding an optional value.
pub(super) fn from_json<T: serde::de::DeserializeOwned>(
    text: Option<String>,
) -> Result<Option<T>, sqlx::Error> {
    text.map(|t| serde_json::from_str(&t))
        .transpose()
        .map_err(|e| decode_error(e.to_string()))
}

/// An optional value as a JSON column.
pub(super) fn to_json<T: serde::Serialize>(
    value: Option<&T>,
) -> Result<Option<String>, sqlx::Error> {
    value
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| sqlx::Error::Encode(Box::new(e)))
}

/// `metered_prices` as stored: none for a membership without metered prices.
pub(super) fn metered_json(metered: &[MeteredTerm]) -> Result<Option<String>, sqlx::Error> {
    to_json(Some(&metered).filter(|m| !m.is_empty()))
}

/// `discount` as stored.
pub(super) fn discount_json(discount: Option<&Discount>) -> Result<Option<String>, sqlx::Error> {
    to_json(discount)
}

/// `scheduled_change` as stored.
fn scheduled_json(change: Option<&ScheduledChange>) -> Result<Option<String>, sqlx::Error> {
    to_json(change)
}

pub(super) fn rates_json(rates: &[TaxRate]) -> Result<String, sqlx::Error> {
    serde_json::to_string(rates).map_err(|e| sqlx::Error::Encode(Box::new(e)))
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

/// The keys of the memberships with these `(merchant id, id)` pairs, by id.
pub async fn keys_many<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    ids: &[(i64, i64)],
) -> Result<std::collections::HashMap<i64, String>, sqlx::Error> {
    use sqlx::Row;
    let rows = crate::store::rows_by_ids(
        executor,
        "memberships",
        "memberships.id, memberships.membership_key",
        ids,
    )
    .await?;
    rows.iter()
        .map(|row| Ok((row.try_get("id")?, row.try_get("membership_key")?)))
        .collect()
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

/// Writes back every changeable column of these memberships, in one statement, where each row
/// still has the membership's `version`, and bumps the versions. Returns `false` when any row
/// changed since it was read; the caller must then roll back, as some rows may have been
/// written.
pub async fn save_many(
    tx: &mut Tx,
    memberships: &mut [&mut Membership],
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    if memberships.is_empty() {
        return Ok(true);
    }
    const COLUMNS: usize = 30;
    let sql = format!(
        "UPDATE memberships SET subscription_name = v.column4, metadata = v.column5, \
         return_to_website_link = v.column6, end_date = v.column7, total_amount = v.column8, \
         price_per_unit = v.column9, quantity = v.column10, interval_type = v.column11, \
         interval_count = v.column12, recurring_attempts = v.column13, status = v.column14, \
         current_period_start = v.column15, current_period_end = v.column16, \
         credit_balance = v.column17, dunning_failed_at = v.column18, \
         dunning_retries = v.column19, next_action_at = v.column20, canceled_at = v.column21, \
         tax_rates = v.column22, price_key = v.column23, trial_days = v.column24, \
         trial_end = v.column25, trial_notice_at = v.column26, discount = v.column27, \
         period_discount = v.column28, resume_at = v.column29, scheduled_change = v.column30, \
         updated_at = $1, version = memberships.version + 1 \
         FROM (VALUES {}) AS v \
         WHERE memberships.id = v.column1 AND memberships.merchant_id = v.column2 \
         AND memberships.version = v.column3",
        super::placeholders(memberships.len(), COLUMNS, 2)
    );
    let sql = crate::store::for_backend(sql, crate::store::Backend::of(tx));
    let mut query = sqlx::query(&sql).bind(to_micros(now));
    for m in memberships.iter() {
        let state = &m.state;
        query = query
            .bind(m.id)
            .bind(m.merchant_id)
            .bind(m.version)
            .bind(m.subscription_name.clone())
            .bind(m.metadata.clone())
            .bind(m.return_to_website_link.clone())
            .bind(state.end_date.map(to_micros))
            .bind(state.price.total)
            .bind(state.price.per_unit)
            .bind(state.price.quantity)
            .bind(state.cycle.interval_type.as_str())
            .bind(i64::from(state.cycle.interval_count))
            .bind(state.recurring_attempts)
            .bind(state.status.as_str())
            .bind(state.current_period.map(|p| to_micros(p.start)))
            .bind(state.current_period.map(|p| to_micros(p.end)))
            .bind(state.credit_balance)
            .bind(state.dunning_failed_at.map(to_micros))
            .bind(state.dunning_retries)
            .bind(state.next_action_at.map(to_micros))
            .bind(state.canceled_at.map(to_micros))
            .bind(rates_json(&m.tax_rates)?)
            .bind(m.price_key.clone())
            .bind(state.trial_days.map(i64::from))
            .bind(state.trial_end.map(to_micros))
            .bind(state.trial_notice_at.map(to_micros))
            .bind(discount_json(state.discount.as_ref())?)
            .bind(state.period_discount)
            .bind(state.resume_at.map(to_micros))
            .bind(scheduled_json(state.scheduled.as_ref())?);
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

/// Writes the membership's tax rates alone (an update's new `taxRateIds`, which apply from the
/// next invoice): no version check, as the caller holds the row's lock.
pub async fn set_tax_rates(tx: &mut Tx, m: &Membership) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE memberships SET tax_rates = $1 WHERE id = $2 AND merchant_id = $3")
        .bind(rates_json(&m.tax_rates)?)
        .bind(m.id)
        .bind(m.merchant_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Writes the membership's metered prices alone (an update's new `meteredPriceIds`): no version
/// check, as the caller holds the row's lock.
pub async fn set_metered_prices(tx: &mut Tx, m: &Membership) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE memberships SET metered_prices = $1 WHERE id = $2 AND merchant_id = $3")
        .bind(metered_json(&m.metered)?)
        .bind(m.id)
        .bind(m.merchant_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
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
    let sql = crate::store::for_backend(sql, crate::store::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for (merchant_id, id) in ids {
        query = query.bind(*merchant_id).bind(*id);
    }
    let rows = query.fetch_all(&mut **tx).await?;
    rows.iter().map(decode).collect()
}
