//! What the two kinds of delivery share: an event's to its own URL (`events`, [`super::events`])
//! and its copies to the merchant's registered endpoints (`endpoint_deliveries`,
//! [`super::endpoint_deliveries`]). Their tables have alike columns for a delivery's state, so a
//! pass finds due rows, leases them and records their attempts' outcomes with the same
//! statements, on either table; an attempt reads alike from `event_attempts` and
//! `endpoint_attempts`.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::{from_micros, to_micros, Store, Tx};

/// Where an event stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventStatus {
    /// Waiting for its next attempt.
    Pending,
    /// An endpoint answered 2xx.
    Delivered,
    /// Every attempt of its round failed.
    Undeliverable,
}

impl EventStatus {
    /// Every status.
    pub const ALL: [EventStatus; 3] = [
        EventStatus::Pending,
        EventStatus::Delivered,
        EventStatus::Undeliverable,
    ];

    /// The stored and API name.
    pub fn as_str(self) -> &'static str {
        match self {
            EventStatus::Pending => "Pending",
            EventStatus::Delivered => "Delivered",
            EventStatus::Undeliverable => "Undeliverable",
        }
    }

    /// The status stored as `text` (the CHECK constraint allows only the three).
    pub(super) fn from_db(text: &str) -> EventStatus {
        match text {
            "Delivered" => EventStatus::Delivered,
            "Undeliverable" => EventStatus::Undeliverable,
            _ => EventStatus::Pending,
        }
    }
}

/// One delivery attempt.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// 1-based number among all attempts of the event.
    pub attempt: i64,
    /// When it started (merchant time).
    pub started_at: DateTime<Utc>,
    /// The endpoint's HTTP status, when it answered.
    pub status_code: Option<i64>,
    /// Time to the answer or the failure.
    pub latency_ms: i64,
    /// Why it failed, when it did without an HTTP status (time-out, refused address, TLS…).
    pub error: Option<String>,
    /// When the next attempt is due, if one is.
    pub next_attempt_at: Option<DateTime<Utc>>,
}

/// An attempt read from a row of `event_attempts` or `endpoint_attempts`.
pub(super) fn decode_attempt(row: &AnyRow) -> Result<Attempt, sqlx::Error> {
    Ok(Attempt {
        attempt: row.try_get("attempt")?,
        started_at: from_micros(row.try_get("started_at")?),
        status_code: row.try_get("status_code")?,
        latency_ms: row.try_get("latency_ms")?,
        error: row.try_get("error")?,
        next_attempt_at: row
            .try_get::<Option<i64>, _>("next_attempt_at")?
            .map(from_micros),
    })
}

/// Which merchants' events a pass looks at.
#[derive(Debug, Clone, Copy)]
pub enum Scope {
    /// Merchants on real time (no test clock): due by `now`.
    RealTime,
    /// One merchant on its test clock: due by that clock.
    Merchant(i64),
}

impl Scope {
    /// The condition on `merchant_column` that keeps this scope's rows, with its value at `$3`
    /// ([`Scope::bound`]).
    pub(super) fn condition(self, merchant_column: &str) -> String {
        match self {
            Scope::RealTime => format!(
                "$3 = 0 AND {merchant_column} NOT IN (SELECT t.merchant_id FROM test_clocks t)"
            ),
            Scope::Merchant(_) => format!("{merchant_column} = $3"),
        }
    }

    /// The value [`Scope::condition`] binds.
    pub(super) fn bound(self) -> i64 {
        match self {
            Scope::RealTime => 0,
            Scope::Merchant(id) => id,
        }
    }
}

/// A delivery due (of an event to its own URL, or to a registered endpoint), as much of it as
/// choosing whether to lease it needs.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Internal id (in its own table).
    pub id: i64,
    /// Where it goes.
    pub url: String,
    /// When it is due.
    pub next_attempt_at: DateTime<Utc>,
}

/// The candidates `sql` finds: `$1` the scope's time, `$2` the real time leases are compared
/// with, `$3` the scope's value ([`Scope::condition`]), `$4` the limit; it selects `id`, `url`
/// and `next_attempt_at`.
pub(super) async fn due_candidates(
    store: &Store,
    sql: &str,
    scope: Scope,
    now: DateTime<Utc>,
    real_now: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Candidate>, sqlx::Error> {
    let rows = sqlx::query(sql)
        .bind(to_micros(now))
        .bind(to_micros(real_now))
        .bind(scope.bound())
        .bind(limit)
        .fetch_all(store.pool())
        .await?;
    rows.iter()
        .map(|row| {
            Ok(Candidate {
                id: row.try_get("id")?,
                url: row.try_get("url")?,
                next_attempt_at: from_micros(row.try_get("next_attempt_at")?),
            })
        })
        .collect()
}

/// Leases the rows `ids` of `table` (`events` or `endpoint_deliveries`, whose delivery columns
/// are alike) that are pending and not leased at `real_now` (none, or an expired lease) until
/// `until`, in one statement; returns their `returning` columns. An empty `ids` costs nothing.
pub(super) async fn lease_rows(
    store: &Store,
    table: &str,
    returning: &str,
    ids: &[i64],
    real_now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<AnyRow>, sqlx::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = super::for_backend(
        format!(
            "UPDATE {table} SET lease_until = $1 \
             WHERE id IN (SELECT column1 FROM (VALUES {}) AS v) AND status = 'Pending' \
             AND (lease_until IS NULL OR lease_until < $2) RETURNING {returning}",
            super::placeholders(ids.len(), 1, 3)
        ),
        store.backend(),
    );
    let mut query = sqlx::query(&sql)
        .bind(to_micros(until))
        .bind(to_micros(real_now));
    for id in ids {
        query = query.bind(*id);
    }
    query.fetch_all(store.writer()).await
}

/// The outcome of one attempt, to record.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// When it started (merchant time).
    pub started_at: DateTime<Utc>,
    /// HTTP status, if the endpoint answered.
    pub status_code: Option<u16>,
    /// Time taken.
    pub latency_ms: i64,
    /// Failure without an HTTP status.
    pub error: Option<String>,
    /// The event's status afterwards.
    pub status: EventStatus,
    /// The next attempt, when one is due.
    pub next_attempt_at: Option<DateTime<Utc>>,
}

/// Records on the rows of `table` (`events` or `endpoint_deliveries`, whose columns for a
/// delivery's state are alike) the outcome of one attempt each, by row id, and releases their
/// leases: two statements however many there are.
pub(super) async fn close_attempts(
    tx: &mut Tx,
    table: &str,
    outcomes: &[(i64, &Outcome)],
) -> Result<(), sqlx::Error> {
    if outcomes.is_empty() {
        return Ok(());
    }
    // Each row's new state, as VALUES (id, status, next_attempt_at, delivered_at).
    let values = format!(
        "(VALUES {}) AS o",
        super::placeholders(outcomes.len(), 4, 1)
    );
    let backend = super::Backend::of(tx);
    let bind_values = |sql| {
        let mut query = sqlx::query(sql);
        for (id, outcome) in outcomes {
            let delivered = outcome.status == EventStatus::Delivered;
            query = query
                .bind(*id)
                .bind(outcome.status.as_str())
                .bind(outcome.next_attempt_at.map(to_micros))
                .bind(delivered.then(|| to_micros(outcome.started_at)));
        }
        query
    };
    // A re-send while an attempt was in flight cleared its lease and started a new round: the
    // attempt is counted, but the new round stays due. Run first, while the leases of the other
    // rows still tell them apart.
    let resent = super::for_backend(
        format!(
            "UPDATE {table} SET attempts = {table}.attempts + 1, \
             delivered_at = COALESCE(o.column4, {table}.delivered_at) FROM {values} \
             WHERE {table}.id = o.column1 AND {table}.lease_until IS NULL"
        ),
        backend,
    );
    bind_values(&resent).execute(&mut **tx).await?;
    let leased = super::for_backend(
        format!(
            "UPDATE {table} SET status = o.column2, attempts = {table}.attempts + 1, \
             round_attempts = {table}.round_attempts + 1, next_attempt_at = o.column3, \
             lease_until = NULL, delivered_at = COALESCE(o.column4, {table}.delivered_at) \
             FROM {values} WHERE {table}.id = o.column1 AND {table}.lease_until IS NOT NULL"
        ),
        backend,
    );
    bind_values(&leased).execute(&mut **tx).await?;
    Ok(())
}
