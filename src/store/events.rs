//! Delivering the `events` outbox: finding due events, leasing them to one dispatcher,
//! recording each attempt, listing and re-sending. Every query is scoped by merchant id, or by
//! an event id read under one.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::keyset::{self, Filters, Window};
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

/// A stored event.
#[derive(Debug, Clone)]
pub struct Event {
    /// Internal id.
    pub id: i64,
    /// Owning merchant.
    pub merchant_id: i64,
    /// `ActionId`.
    pub action_id: String,
    /// `Action`.
    pub action: String,
    /// `OrderId`.
    pub order_id: String,
    /// Destination.
    pub webhook_url: String,
    /// Payload without `Signature`.
    pub payload: String,
    /// Status.
    pub status: EventStatus,
    /// Attempts made in all.
    pub attempts: i64,
    /// Attempts made in the current round (a re-send starts a new round).
    pub round_attempts: i64,
    /// When the next attempt is due (merchant time).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// When an endpoint accepted it.
    pub delivered_at: Option<DateTime<Utc>>,
    /// When it was recorded.
    pub created_at: DateTime<Utc>,
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

const COLUMNS: &str =
    "id, merchant_id, action_id, action, order_id, webhook_url, payload, status, \
    attempts, round_attempts, next_attempt_at, delivered_at, created_at";

fn decode(row: &AnyRow) -> Result<Event, sqlx::Error> {
    let time = |name: &str| -> Result<Option<DateTime<Utc>>, sqlx::Error> {
        Ok(row.try_get::<Option<i64>, _>(name)?.map(from_micros))
    };
    Ok(Event {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        action_id: row.try_get("action_id")?,
        action: row.try_get("action")?,
        order_id: row.try_get("order_id")?,
        webhook_url: row.try_get("webhook_url")?,
        payload: row.try_get("payload")?,
        status: EventStatus::from_db(&row.try_get::<String, _>("status")?),
        attempts: row.try_get("attempts")?,
        round_attempts: row.try_get("round_attempts")?,
        next_attempt_at: time("next_attempt_at")?,
        delivered_at: time("delivered_at")?,
        created_at: from_micros(row.try_get("created_at")?),
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

/// How many events are pending (due now or later), over all merchants: the `events_due` index.
pub async fn pending_count(store: &Store) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM events WHERE status = 'Pending'")
        .fetch_one(store.pool())
        .await
}

/// Up to `limit` events due at `now` and not leased at `real_now`, earliest first. They are only
/// candidates: [`lease`] decides who delivers each, and reads them whole.
pub async fn due(
    store: &Store,
    scope: Scope,
    now: DateTime<Utc>,
    real_now: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Candidate>, sqlx::Error> {
    let sql = format!(
        "SELECT id, webhook_url AS url, next_attempt_at FROM events WHERE status = 'Pending' \
         AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until < $2) AND {} \
         ORDER BY next_attempt_at, id LIMIT $4",
        scope.condition("events.merchant_id")
    );
    due_candidates(store, &sql, scope, now, real_now, limit).await
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

/// Leases these events to the caller until `until` (real time), in one statement, and returns
/// those it got: an event another dispatcher holds, or that is no longer pending, is left out.
pub async fn lease(
    store: &Store,
    ids: &[i64],
    real_now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<Event>, sqlx::Error> {
    let rows = lease_rows(store, "events", COLUMNS, ids, real_now, until).await?;
    rows.iter().map(decode).collect()
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
    let sql = format!(
        "UPDATE {table} SET lease_until = $1 \
         WHERE id IN (SELECT column1 FROM (VALUES {}) AS v) AND status = 'Pending' \
         AND (lease_until IS NULL OR lease_until < $2) RETURNING {returning}",
        super::placeholders(ids.len(), 1, 3)
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

/// Records attempts on leased events and releases their leases: three statements however many
/// attempts there are ([`close_attempts`]).
pub async fn record_attempts(
    tx: &mut Tx,
    attempts: &[(&Event, &Outcome)],
) -> Result<(), sqlx::Error> {
    if attempts.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO event_attempts (event_id, attempt, started_at, status_code, latency_ms, \
         error, next_attempt_at) VALUES {}",
        super::placeholders(attempts.len(), 7, 1)
    );
    let mut insert = sqlx::query(&sql);
    for (event, outcome) in attempts {
        insert = insert
            .bind(event.id)
            .bind(event.attempts + 1)
            .bind(to_micros(outcome.started_at))
            .bind(outcome.status_code.map(i64::from))
            .bind(outcome.latency_ms)
            .bind(&outcome.error)
            .bind(outcome.next_attempt_at.map(to_micros));
    }
    insert.execute(&mut **tx).await?;
    let rounds: Vec<(i64, &Outcome)> = attempts.iter().map(|(e, o)| (e.id, *o)).collect();
    close_attempts(tx, "events", &rounds).await
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
    let resent = format!(
        "UPDATE {table} SET attempts = {table}.attempts + 1, \
         delivered_at = COALESCE(o.column4, {table}.delivered_at) FROM {values} \
         WHERE {table}.id = o.column1 AND {table}.lease_until IS NULL"
    );
    bind_values(&resent).execute(&mut **tx).await?;
    let leased = format!(
        "UPDATE {table} SET status = o.column2, attempts = {table}.attempts + 1, \
         round_attempts = {table}.round_attempts + 1, next_attempt_at = o.column3, \
         lease_until = NULL, delivered_at = COALESCE(o.column4, {table}.delivered_at) \
         FROM {values} WHERE {table}.id = o.column1 AND {table}.lease_until IS NOT NULL"
    );
    bind_values(&leased).execute(&mut **tx).await?;
    Ok(())
}

/// The membership's events, newest first, with their attempts.
pub async fn for_membership(
    store: &Store,
    merchant_id: i64,
    membership_id: i64,
    limit: i64,
) -> Result<Vec<(Event, Vec<Attempt>)>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM events WHERE merchant_id = $1 AND membership_id = $2 \
         ORDER BY id DESC LIMIT $3"
    );
    let rows = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(membership_id)
        .bind(limit)
        .fetch_all(store.pool())
        .await?;
    let events = rows.iter().map(decode).collect::<Result<Vec<_>, _>>()?;
    let ids: Vec<i64> = events.iter().map(|event| event.id).collect();
    let mut attempts = attempts_of(store.pool(), &ids).await?;
    Ok(events
        .into_iter()
        .map(|event| {
            let made = attempts.remove(&event.id).unwrap_or_default();
            (event, made)
        })
        .collect())
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

/// The attempts of these events (ids read under their merchant), oldest first, by event id.
pub async fn attempts_of<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    event_ids: &[i64],
) -> Result<HashMap<i64, Vec<Attempt>>, sqlx::Error> {
    let rows = super::rows_with_ids(
        executor,
        "SELECT event_id, attempt, started_at, status_code, latency_ms, error, next_attempt_at \
         FROM event_attempts",
        "event_id",
        event_ids,
        "event_id, id",
    )
    .await?;
    let mut attempts: HashMap<i64, Vec<Attempt>> = HashMap::new();
    for row in &rows {
        attempts
            .entry(row.try_get("event_id")?)
            .or_default()
            .push(decode_attempt(row)?);
    }
    Ok(attempts)
}

/// What a list of events keeps (all of the merchant's when empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only events with this `Action` (index `events_by_action`).
    pub action: Option<String>,
    /// Only events whose delivery is in this status (index `events_by_status`).
    pub status: Option<EventStatus>,
    /// Only the events of the merchant's membership with this key (index
    /// `events_by_membership`); none for a key the merchant does not have.
    pub membership_key: Option<String>,
}

/// A page of the merchant's events that `filter` keeps, newest first ([`keyset`]), without
/// their attempts ([`attempts_of`]).
pub async fn page<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    filter: &Filter,
    window: Window,
) -> Result<Vec<Event>, sqlx::Error> {
    let mut filters = Filters::default();
    filters.equal("e.action", filter.action.as_deref());
    filters.equal("e.status", filter.status.map(EventStatus::as_str));
    filters.owned_by(
        "e.membership_id",
        "memberships",
        "membership_key",
        filter.membership_key.as_deref(),
    );
    let select = format!("SELECT {COLUMNS} FROM events e");
    let rows = keyset::page(executor, &select, "e", merchant_id, &filters, window).await?;
    rows.iter().map(decode).collect()
}

/// The merchant's event `action_id`, if it has one.
pub async fn by_action_id<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    action_id: &str,
) -> Result<Option<Event>, sqlx::Error> {
    let sql = format!("SELECT {COLUMNS} FROM events WHERE merchant_id = $1 AND action_id = $2");
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(action_id)
        .fetch_optional(executor)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Schedules an event of `merchant_id` for a new round of attempts at `now`, whatever its
/// status. Returns the event, or `None` when the merchant has no such event.
pub async fn resend(
    tx: &mut Tx,
    merchant_id: i64,
    action_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<Event>, sqlx::Error> {
    let sql = format!(
        "UPDATE events SET status = 'Pending', round_attempts = 0, next_attempt_at = $1, \
         lease_until = NULL WHERE merchant_id = $2 AND action_id = $3 RETURNING {COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(to_micros(now))
        .bind(merchant_id)
        .bind(action_id)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Re-sends the merchant's event `action_id` at `now`, in one transaction: a new round of
/// attempts at the membership's `webhookUrl` and at every endpoint that received it
/// ([`super::endpoint_deliveries::resend_event`]). `None` for an unknown event (or another
/// merchant's).
pub async fn resend_everywhere(
    store: &Store,
    merchant_id: i64,
    action_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<Event>, sqlx::Error> {
    let mut tx = store.begin().await?;
    let Some(event) = resend(&mut tx, merchant_id, action_id, now).await? else {
        return Ok(None);
    };
    super::endpoint_deliveries::resend_event(&mut tx, merchant_id, event.id, now).await?;
    tx.commit().await?;
    Ok(Some(event))
}

/// The `ActionId` of the order's newest event with `action`, if any.
pub async fn latest_for_order<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    order_id: &str,
    action: &str,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT action_id FROM events WHERE merchant_id = $1 AND order_id = $2 AND action = $3 \
         ORDER BY id DESC LIMIT 1",
    )
    .bind(merchant_id)
    .bind(order_id)
    .bind(action)
    .fetch_optional(executor)
    .await
}
