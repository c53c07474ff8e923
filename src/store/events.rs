//! Delivering the `events` outbox: finding due events, leasing them to one dispatcher,
//! recording each attempt, listing and re-sending. Every query is scoped by merchant id, or by
//! an event id read under one.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::deliveries::{close_attempts, decode_attempt, due_candidates, lease_rows};
use super::keyset::{self, Filters, Window};
use super::{from_micros, to_micros, Store, Tx};

/// The delivery state this module's events and functions speak of, shared with the deliveries to
/// endpoints ([`super::deliveries`]).
pub use super::deliveries::{Attempt, Candidate, EventStatus, Outcome, Scope};

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
    let sql = super::for_backend(sql, super::Backend::of(tx));
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
/// attempts at the membership's `webhookUrl` and at every endpoint that received it. `None` for
/// an unknown event (or another merchant's).
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
    resend_to_endpoints(&mut tx, merchant_id, event.id, now).await?;
    tx.commit().await?;
    Ok(Some(event))
}

/// Starts a new round of attempts at `now` for every delivery of the merchant's event
/// `event_id` to an endpoint that still exists (a re-send of the event).
async fn resend_to_endpoints(
    tx: &mut Tx,
    merchant_id: i64,
    event_id: i64,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE endpoint_deliveries SET status = 'Pending', round_attempts = 0, \
         next_attempt_at = $3, lease_until = NULL \
         WHERE merchant_id = $1 AND event_id = $2 AND endpoint_id IN \
         (SELECT w.id FROM webhook_endpoints w WHERE w.merchant_id = $1 AND w.deleted_at IS NULL)",
    )
    .bind(merchant_id)
    .bind(event_id)
    .bind(to_micros(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
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
