//! The figures of the dashboard's overview (DESIGN §13), each read from an index that holds
//! exactly its rows (migration 0028, and 0022's `memberships_by_status` and `events_by_status`),
//! so that its cost follows what it counts and not the length of the merchant's history.

use chrono::{DateTime, Utc};
use recur_domain::calendar::{BillingCycle, IntervalType};
use recur_domain::status::MembershipStatus;
use sqlx::{Any, Executor, Row};

use super::to_micros;

/// The statuses whose memberships renew, and so count in the monthly recurring revenue: Active,
/// and PastDue (a renewal failed but dunning is retrying it; the membership has not stopped).
pub const RECURRING: [MembershipStatus; 2] = [MembershipStatus::Active, MembershipStatus::PastDue];

/// Counts stop at this many: a figure above it is shown as "more than", so that counting the
/// terminal statuses (Canceled, Expired, Completed) or old undeliverable events reads at most
/// this many index entries however long the history.
pub const COUNT_CAP: i64 = 10_000;

/// The summed prices of the renewing memberships of one currency and billing cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecurringGroup {
    /// ISO 4217 code.
    pub currency: String,
    /// The cycle the prices are charged on.
    pub cycle: BillingCycle,
    /// The sum of their `totalAmount`s, in minor units.
    pub amount: i64,
}

/// The merchant's renewing memberships ([`RECURRING`]) summed by currency and cycle, read from
/// the index `memberships_recurring` alone.
pub async fn recurring<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
) -> Result<Vec<RecurringGroup>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT currency, interval_type, interval_count, \
                CAST(SUM(total_amount) AS BIGINT) AS amount \
         FROM memberships WHERE merchant_id = $1 AND status IN ($2, $3) \
         GROUP BY currency, interval_type, interval_count \
         ORDER BY currency, interval_type, interval_count",
    )
    .bind(merchant_id)
    .bind(RECURRING[0].as_str())
    .bind(RECURRING[1].as_str())
    .fetch_all(executor)
    .await?;
    rows.iter()
        .map(|row| {
            let interval_type: String = row.try_get("interval_type")?;
            let count: i64 = row.try_get("interval_count")?;
            Ok(RecurringGroup {
                currency: row.try_get("currency")?,
                cycle: BillingCycle {
                    interval_type: IntervalType::parse(&interval_type)
                        .map_err(|e| sqlx::Error::Decode(e.to_string().into()))?,
                    interval_count: u32::try_from(count)
                        .map_err(|e| sqlx::Error::Decode(e.to_string().into()))?,
                },
                amount: row.try_get("amount")?,
            })
        })
        .collect()
}

/// How many of the merchant's memberships are in `status`, up to [`COUNT_CAP`] (index
/// `memberships_by_status`).
pub async fn count_in_status<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    status: MembershipStatus,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT 1 FROM memberships \
         WHERE merchant_id = $1 AND status = $2 LIMIT $3) AS capped",
    )
    .bind(merchant_id)
    .bind(status.as_str())
    .bind(COUNT_CAP)
    .fetch_one(executor)
    .await
}

/// How many of the merchant's events could not be delivered, up to [`COUNT_CAP`] (index
/// `events_by_status`).
pub async fn undeliverable_events<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT 1 FROM events \
         WHERE merchant_id = $1 AND status = 'Undeliverable' LIMIT $2) AS capped",
    )
    .bind(merchant_id)
    .bind(COUNT_CAP)
    .fetch_one(executor)
    .await
}

/// Money in or out on one UTC day, in one currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayAmount {
    /// Days since 1970-01-01 (UTC).
    pub day: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// Minor units.
    pub amount: i64,
}

async fn by_day<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    sql: &str,
    merchant_id: i64,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<DayAmount>, sqlx::Error> {
    let rows = sqlx::query(sql)
        .bind(merchant_id)
        .bind(to_micros(from))
        .bind(to_micros(until))
        .fetch_all(executor)
        .await?;
    rows.iter()
        .map(|row| {
            Ok(DayAmount {
                day: row.try_get("day")?,
                currency: row.try_get("currency")?,
                amount: row.try_get("amount")?,
            })
        })
        .collect()
}

/// What the merchant's invoices took in, per UTC day and currency, for invoices paid in
/// `[from, until)` (index `invoices_paid_at`).
pub async fn paid_by_day<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<DayAmount>, sqlx::Error> {
    let sql = "SELECT paid_at / 86400000000 AS day, currency, CAST(SUM(amount_paid) AS BIGINT) AS amount \
               FROM invoices WHERE merchant_id = $1 AND status = 'Paid' \
               AND paid_at >= $2 AND paid_at < $3 \
               GROUP BY paid_at / 86400000000, currency ORDER BY day, currency";
    by_day(executor, sql, merchant_id, from, until).await
}

/// What was given back of the merchant's invoices, per UTC day and currency, for refunds that
/// succeeded in `[from, until)` (index `refunds_completed_at`).
pub async fn refunded_by_day<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<DayAmount>, sqlx::Error> {
    let sql = "SELECT completed_at / 86400000000 AS day, currency, CAST(SUM(amount) AS BIGINT) AS amount \
               FROM refunds WHERE merchant_id = $1 AND status = 'Succeeded' \
               AND invoice_id IS NOT NULL AND completed_at >= $2 AND completed_at < $3 \
               GROUP BY completed_at / 86400000000, currency ORDER BY day, currency";
    by_day(executor, sql, merchant_id, from, until).await
}
