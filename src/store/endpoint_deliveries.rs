//! Deliveries of events to a merchant's webhook endpoints (`endpoint_deliveries`) and their
//! attempt log (`endpoint_attempts`), DESIGN §12: written with the event, in its transaction;
//! found due, leased to one dispatcher and recorded like the deliveries to an event's own URL
//! ([`super::events`]), with the same statements ([`super::deliveries`]), each on its own
//! schedule. A re-send of the event starts their new round too
//! ([`super::events::resend_everywhere`]).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::deliveries::{
    close_attempts, decode_attempt, due_candidates, lease_rows, Attempt, Candidate, EventStatus,
    Outcome, Scope,
};
use super::keyset::{self, Filters, Value, Window};
use super::{from_micros, to_micros, Store, Tx};

/// Writes, for each of these just-recorded events (by `ActionId`), one pending delivery to each
/// enabled endpoint of its merchant whose filter takes its `Action`: one statement, however
/// many events and endpoints.
pub async fn fan_out(tx: &mut Tx, action_ids: &[String]) -> Result<(), sqlx::Error> {
    if action_ids.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO endpoint_deliveries (merchant_id, endpoint_id, event_id, action_id, action, \
         status, attempts, round_attempts, next_attempt_at, created_at) \
         SELECT e.merchant_id, w.id, e.id, e.action_id, e.action, 'Pending', 0, 0, \
         e.next_attempt_at, e.created_at \
         FROM events e JOIN webhook_endpoints w ON w.merchant_id = e.merchant_id \
         WHERE e.action_id IN (SELECT column1 FROM (VALUES {}) AS v) \
         AND w.enabled = 1 AND w.deleted_at IS NULL \
         AND (w.all_events = 1 OR EXISTS (SELECT 1 FROM webhook_endpoint_events f \
              WHERE f.endpoint_id = w.id AND f.action = e.action)) \
         ORDER BY e.id, w.id",
        super::placeholders(action_ids.len(), 1, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for action_id in action_ids {
        query = query.bind(action_id.as_str());
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

/// Writes a test event's delivery to endpoint `endpoint_id` of `merchant_id`, due at `now`,
/// with its own `payload`.
pub async fn insert_test(
    tx: &mut Tx,
    merchant_id: i64,
    endpoint_id: i64,
    action_id: &str,
    action: &str,
    payload: &str,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO endpoint_deliveries (merchant_id, endpoint_id, action_id, action, payload, \
         status, attempts, round_attempts, next_attempt_at, created_at) \
         VALUES ($1, $2, $3, $4, $5, 'Pending', 0, 0, $6, $6)",
    )
    .bind(merchant_id)
    .bind(endpoint_id)
    .bind(action_id)
    .bind(action)
    .bind(payload)
    .bind(to_micros(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Up to `limit` deliveries to enabled endpoints due at `now` and not leased at `real_now`,
/// earliest first ([`super::events::due`] for endpoints).
pub async fn due(
    store: &Store,
    scope: Scope,
    now: DateTime<Utc>,
    real_now: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Candidate>, sqlx::Error> {
    let sql = format!(
        "SELECT d.id, w.url, d.next_attempt_at FROM endpoint_deliveries d \
         JOIN webhook_endpoints w ON w.id = d.endpoint_id \
         WHERE d.status = 'Pending' AND d.next_attempt_at <= $1 \
         AND (d.lease_until IS NULL OR d.lease_until < $2) AND w.enabled = 1 AND {} \
         ORDER BY d.next_attempt_at, d.id LIMIT $4",
        scope.condition("d.merchant_id")
    );
    due_candidates(store, &sql, scope, now, real_now, limit).await
}

/// A leased delivery with everything its attempt needs.
#[derive(Debug, Clone)]
pub struct Leased {
    /// Internal id.
    pub id: i64,
    /// Owning merchant.
    pub merchant_id: i64,
    /// The endpoint.
    pub endpoint_id: i64,
    /// `ActionId`.
    pub action_id: String,
    /// `OrderId`; `None` for a test event.
    pub order_id: Option<String>,
    /// The endpoint's URL.
    pub url: String,
    /// Payload without `Signature`.
    pub payload: String,
    /// Attempts made in all.
    pub attempts: i64,
    /// Attempts made in the current round.
    pub round_attempts: i64,
    /// The endpoint's signing secret, sealed.
    pub secret_sealed: String,
    /// Its previous secret, sealed, with the time (merchant time) until which it signs too.
    pub previous_secret: Option<(String, DateTime<Utc>)>,
}

/// Leases these deliveries to the caller until `until` (real time) and returns those it got
/// whose endpoint is still enabled: one statement leases, one reads them whole.
pub async fn lease(
    store: &Store,
    ids: &[i64],
    real_now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<Leased>, sqlx::Error> {
    let leased = lease_rows(store, "endpoint_deliveries", "id", ids, real_now, until)
        .await?
        .iter()
        .map(|row| row.try_get::<i64, _>("id"))
        .collect::<Result<Vec<_>, _>>()?;
    if leased.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT d.id, d.merchant_id, d.endpoint_id, d.action_id, e.order_id, w.url, \
         COALESCE(d.payload, e.payload) AS payload, d.attempts, d.round_attempts, \
         w.secret_sealed, w.previous_secret_sealed, w.previous_secret_until \
         FROM endpoint_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id \
         LEFT JOIN events e ON e.id = d.event_id \
         WHERE d.id IN (SELECT column1 FROM (VALUES {}) AS v) AND w.enabled = 1 ORDER BY d.id",
        super::placeholders(leased.len(), 1, 1)
    );
    let sql = super::for_backend(sql, store.backend());
    let mut query = sqlx::query(&sql);
    for id in &leased {
        query = query.bind(*id);
    }
    let rows = query.fetch_all(store.writer()).await?;
    rows.iter().map(decode_leased).collect()
}

fn decode_leased(row: &AnyRow) -> Result<Leased, sqlx::Error> {
    let previous: Option<String> = row.try_get("previous_secret_sealed")?;
    let until: Option<i64> = row.try_get("previous_secret_until")?;
    Ok(Leased {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        endpoint_id: row.try_get("endpoint_id")?,
        action_id: row.try_get("action_id")?,
        order_id: row.try_get("order_id")?,
        url: row.try_get("url")?,
        payload: row.try_get("payload")?,
        attempts: row.try_get("attempts")?,
        round_attempts: row.try_get("round_attempts")?,
        secret_sealed: row.try_get("secret_sealed")?,
        previous_secret: previous.zip(until.map(from_micros)),
    })
}

/// Records attempts on leased deliveries and releases their leases: three statements however
/// many attempts there are (as [`super::events::record_attempts`] does for events).
pub async fn record_attempts(
    tx: &mut Tx,
    attempts: &[(&Leased, &Outcome)],
) -> Result<(), sqlx::Error> {
    if attempts.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO endpoint_attempts (merchant_id, endpoint_id, delivery_id, attempt, \
         started_at, status_code, latency_ms, error, next_attempt_at) VALUES {}",
        super::placeholders(attempts.len(), 9, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut insert = sqlx::query(&sql);
    for (delivery, outcome) in attempts {
        insert = insert
            .bind(delivery.merchant_id)
            .bind(delivery.endpoint_id)
            .bind(delivery.id)
            .bind(delivery.attempts + 1)
            .bind(to_micros(outcome.started_at))
            .bind(outcome.status_code.map(i64::from))
            .bind(outcome.latency_ms)
            .bind(&outcome.error)
            .bind(outcome.next_attempt_at.map(to_micros));
    }
    insert.execute(&mut **tx).await?;
    let rounds: Vec<(i64, &Outcome)> = attempts.iter().map(|(d, o)| (d.id, *o)).collect();
    close_attempts(tx, "endpoint_deliveries", &rounds).await
}

/// One attempt in an endpoint's log.
#[derive(Debug, Clone)]
pub struct LoggedAttempt {
    /// Internal id (the page's order).
    pub id: i64,
    /// The event's `ActionId`.
    pub action_id: String,
    /// The event's `Action`.
    pub action: String,
    /// 1-based number among the delivery's attempts.
    pub attempt: i64,
    /// The endpoint's HTTP status, when it answered.
    pub status_code: Option<i64>,
    /// Time to the answer or the failure.
    pub latency_ms: i64,
    /// Why it failed without an HTTP status.
    pub error: Option<String>,
    /// When it started (merchant time).
    pub started_at: DateTime<Utc>,
}

/// A page of the attempt log of the merchant's endpoint `endpoint_id`, newest first, read off
/// the index `endpoint_attempts_by_endpoint`.
pub async fn attempts_page<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    endpoint_id: i64,
    window: Window,
) -> Result<Vec<LoggedAttempt>, sqlx::Error> {
    let mut filters = Filters::default();
    filters.and_within(vec![Value::Int(endpoint_id)], |p| {
        format!("a.endpoint_id = {}", p[0])
    });
    let rows = keyset::page(
        executor,
        "SELECT a.id, d.action_id, d.action, a.attempt, a.status_code, a.latency_ms, a.error, \
         a.started_at FROM endpoint_attempts a JOIN endpoint_deliveries d ON d.id = a.delivery_id",
        "a",
        merchant_id,
        &filters,
        window,
    )
    .await?;
    rows.iter()
        .map(|row| {
            Ok(LoggedAttempt {
                id: row.try_get("id")?,
                action_id: row.try_get("action_id")?,
                action: row.try_get("action")?,
                attempt: row.try_get("attempt")?,
                status_code: row.try_get("status_code")?,
                latency_ms: row.try_get("latency_ms")?,
                error: row.try_get("error")?,
                started_at: from_micros(row.try_get("started_at")?),
            })
        })
        .collect()
}

/// A delivery of one event to one of the merchant's endpoints, with its attempts.
#[derive(Debug, Clone)]
pub struct EventDelivery {
    /// The endpoint's `we_…` key.
    pub endpoint_key: String,
    /// The endpoint's URL.
    pub url: String,
    /// Pending, Delivered or Undeliverable.
    pub status: EventStatus,
    /// When the next attempt is due, if one is.
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// Its attempts, oldest first.
    pub attempts: Vec<Attempt>,
}

/// The deliveries to endpoints of these events (ids read under their merchant), by event id,
/// each with its attempts: two statements, read off `endpoint_deliveries_by_event` and
/// `endpoint_attempts_by_delivery`.
pub async fn of_events(
    store: &Store,
    event_ids: &[i64],
) -> Result<HashMap<i64, Vec<EventDelivery>>, sqlx::Error> {
    let rows = super::rows_with_ids(
        store.pool(),
        "SELECT d.id, d.event_id, d.status, d.next_attempt_at, e.endpoint_key, e.url \
         FROM endpoint_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id",
        "d.event_id",
        event_ids,
        "d.event_id, d.id",
    )
    .await?;
    let ids = rows
        .iter()
        .map(|row| row.try_get("id"))
        .collect::<Result<Vec<i64>, _>>()?;
    let attempt_rows = super::rows_with_ids(
        store.pool(),
        "SELECT delivery_id, attempt, started_at, status_code, latency_ms, error, \
         next_attempt_at FROM endpoint_attempts",
        "delivery_id",
        &ids,
        "delivery_id, id",
    )
    .await?;
    let mut attempts: HashMap<i64, Vec<Attempt>> = HashMap::new();
    for row in &attempt_rows {
        attempts
            .entry(row.try_get("delivery_id")?)
            .or_default()
            .push(decode_attempt(row)?);
    }
    let mut deliveries: HashMap<i64, Vec<EventDelivery>> = HashMap::new();
    for row in &rows {
        let delivery = EventDelivery {
            endpoint_key: row.try_get("endpoint_key")?,
            url: row.try_get("url")?,
            status: EventStatus::from_db(&row.try_get::<String, _>("status")?),
            next_attempt_at: row
                .try_get::<Option<i64>, _>("next_attempt_at")?
                .map(from_micros),
            attempts: attempts
                .remove(&row.try_get::<i64, _>("id")?)
                .unwrap_or_default(),
        };
        deliveries
            .entry(row.try_get("event_id")?)
            .or_default()
            .push(delivery);
    }
    Ok(deliveries)
}
