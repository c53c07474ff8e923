//! The `webhook_endpoints` table and its filters (`webhook_endpoint_events`): a merchant's
//! registered webhook destinations (DESIGN §12). Every query is scoped by merchant id; a
//! deleted endpoint is not found. Deliveries to them are [`super::endpoint_deliveries`].

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row};

use super::{from_micros, to_micros, Pool, Store, Tx};

/// The most endpoints a merchant may hold; creating another is refused.
pub const MAX_PER_MERCHANT: i64 = 20;

/// An endpoint as stored.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Internal id.
    pub id: i64,
    /// Owning merchant.
    pub merchant_id: i64,
    /// Public id (`we_…`).
    pub endpoint_key: String,
    /// Where events are POSTed (absolute HTTPS).
    pub url: String,
    /// The merchant's note.
    pub description: Option<String>,
    /// The `Action`s it takes; `None` for every event.
    pub events: Option<Vec<String>>,
    /// Whether events are sent to it.
    pub enabled: bool,
    /// Its signing secret (`whsec_…`), sealed.
    pub secret_sealed: String,
    /// The secret before the last rotation, sealed, while it still signs.
    pub previous_secret_sealed: Option<String>,
    /// Until when (merchant time) the previous secret signs.
    pub previous_secret_until: Option<DateTime<Utc>>,
    /// When (merchant time) it was disabled for failing, if it was and is still disabled.
    pub disabled_at: Option<DateTime<Utc>>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// What a new endpoint is made of.
#[derive(Debug, Clone)]
pub struct NewEndpoint {
    /// Public id (`we_…`).
    pub endpoint_key: String,
    /// Absolute HTTPS URL.
    pub url: String,
    /// The merchant's note.
    pub description: Option<String>,
    /// The `Action`s it takes; `None` for every event.
    pub events: Option<Vec<String>>,
    /// Its signing secret, sealed.
    pub secret_sealed: String,
}

/// A change to an endpoint: each `Some` replaces the stored value.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// A new URL.
    pub url: Option<String>,
    /// A new filter (`Some(None)`: every event).
    pub events: Option<Option<Vec<String>>>,
    /// Enabled or disabled. Enabling clears the failure streak.
    pub enabled: Option<bool>,
    /// A new note (`Some(None)`: none).
    pub description: Option<Option<String>>,
}

const COLUMNS: &str = "id, merchant_id, endpoint_key, url, description, all_events, enabled, \
    secret_sealed, previous_secret_sealed, previous_secret_until, disabled_at, created_at";

fn decode(row: &AnyRow) -> Result<Endpoint, sqlx::Error> {
    let all_events: i64 = row.try_get("all_events")?;
    Ok(Endpoint {
        id: row.try_get("id")?,
        merchant_id: row.try_get("merchant_id")?,
        endpoint_key: row.try_get("endpoint_key")?,
        url: row.try_get("url")?,
        description: row.try_get("description")?,
        // Filled in by `with_filters`.
        events: (all_events == 0).then(Vec::new),
        enabled: row.try_get::<i64, _>("enabled")? == 1,
        secret_sealed: row.try_get("secret_sealed")?,
        previous_secret_sealed: row.try_get("previous_secret_sealed")?,
        previous_secret_until: row
            .try_get::<Option<i64>, _>("previous_secret_until")?
            .map(from_micros),
        disabled_at: row
            .try_get::<Option<i64>, _>("disabled_at")?
            .map(from_micros),
        created_at: from_micros(row.try_get("created_at")?),
    })
}

/// The endpoints of `rows` with their filters read, in one more query.
async fn with_filters<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    rows: Vec<AnyRow>,
) -> Result<Vec<Endpoint>, sqlx::Error> {
    let mut endpoints = rows.iter().map(decode).collect::<Result<Vec<_>, _>>()?;
    let filtered: Vec<i64> = endpoints
        .iter()
        .filter(|e| e.events.is_some())
        .map(|e| e.id)
        .collect();
    let rows = super::rows_with_ids(
        executor,
        "SELECT endpoint_id, action FROM webhook_endpoint_events",
        "endpoint_id",
        &filtered,
        "endpoint_id, action",
    )
    .await?;
    let mut actions: HashMap<i64, Vec<String>> = HashMap::new();
    for row in rows {
        actions
            .entry(row.try_get("endpoint_id")?)
            .or_default()
            .push(row.try_get("action")?);
    }
    for endpoint in &mut endpoints {
        if endpoint.events.is_some() {
            endpoint.events = Some(actions.remove(&endpoint.id).unwrap_or_default());
        }
    }
    Ok(endpoints)
}

/// Stores a new endpoint, enabled, unless the merchant already holds [`MAX_PER_MERCHANT`] (then
/// `None`). The count and the insert run under the merchant's row lock (PostgreSQL; SQLite's
/// write transaction holds the database), so concurrent creates never pass the cap.
pub async fn insert(
    store: &Store,
    merchant_id: i64,
    new: &NewEndpoint,
    now: DateTime<Utc>,
) -> Result<Option<Endpoint>, sqlx::Error> {
    let mut tx = store.begin().await?;
    super::lock_merchant(&mut tx, store.backend(), merchant_id).await?;
    let held: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM webhook_endpoints WHERE merchant_id = $1 AND deleted_at IS NULL",
    )
    .bind(merchant_id)
    .fetch_one(&mut *tx)
    .await?;
    if held >= MAX_PER_MERCHANT {
        return Ok(None);
    }
    let sql = format!(
        "INSERT INTO webhook_endpoints (merchant_id, endpoint_key, url, description, all_events, \
         enabled, secret_sealed, created_at) VALUES ($1, $2, $3, $4, $5, 1, $6, $7) \
         RETURNING {COLUMNS}"
    );
    let row = sqlx::query(&sql)
        .bind(merchant_id)
        .bind(&new.endpoint_key)
        .bind(&new.url)
        .bind(&new.description)
        .bind(i64::from(new.events.is_none()))
        .bind(&new.secret_sealed)
        .bind(to_micros(now))
        .fetch_one(&mut *tx)
        .await?;
    let mut endpoint = decode(&row)?;
    if let Some(events) = &new.events {
        set_filter(&mut tx, endpoint.id, events).await?;
    }
    endpoint.events = new.events.clone();
    tx.commit().await?;
    Ok(Some(endpoint))
}

/// Replaces the filter rows of endpoint `id` with `actions`.
async fn set_filter(tx: &mut Tx, id: i64, actions: &[String]) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM webhook_endpoint_events WHERE endpoint_id = $1")
        .bind(id)
        .execute(&mut **tx)
        .await?;
    if actions.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO webhook_endpoint_events (endpoint_id, action) VALUES {}",
        super::placeholders(actions.len(), 2, 1)
    );
    let sql = super::for_backend(sql, super::Backend::of(tx));
    let mut query = sqlx::query(&sql);
    for action in actions {
        query = query.bind(id).bind(action.as_str());
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

/// The statement reading the merchant's (`$1`) live endpoint with key `$2`.
fn by_key_sql() -> String {
    format!(
        "SELECT {COLUMNS} FROM webhook_endpoints \
         WHERE merchant_id = $1 AND endpoint_key = $2 AND deleted_at IS NULL"
    )
}

/// The merchant's endpoint with key `endpoint_key`, if it has one.
pub async fn get(
    pool: &Pool,
    merchant_id: i64,
    endpoint_key: &str,
) -> Result<Option<Endpoint>, sqlx::Error> {
    let rows = sqlx::query(&by_key_sql())
        .bind(merchant_id)
        .bind(endpoint_key)
        .fetch_all(pool)
        .await?;
    Ok(with_filters(pool, rows).await?.pop())
}

/// Every endpoint of the merchant, newest first (at most [`MAX_PER_MERCHANT`]).
pub async fn for_merchant(pool: &Pool, merchant_id: i64) -> Result<Vec<Endpoint>, sqlx::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM webhook_endpoints \
         WHERE merchant_id = $1 AND deleted_at IS NULL ORDER BY id DESC"
    );
    let rows = sqlx::query(&sql).bind(merchant_id).fetch_all(pool).await?;
    with_filters(pool, rows).await
}

/// Applies `changes` to the merchant's endpoint `endpoint_key` and returns it as it is now;
/// `None` when the merchant has no such endpoint. Enabling an endpoint starts its health afresh.
pub async fn update(
    tx: &mut Tx,
    merchant_id: i64,
    endpoint_key: &str,
    changes: &Changes,
) -> Result<Option<Endpoint>, sqlx::Error> {
    let sql = "UPDATE webhook_endpoints SET url = COALESCE($3, url), \
         all_events = COALESCE($4, all_events), \
         enabled = COALESCE($5, enabled), \
         failing_since = CASE WHEN $5 = 1 THEN NULL ELSE failing_since END, \
         disabled_at = CASE WHEN $5 IS NULL THEN disabled_at ELSE NULL END, \
         description = CASE WHEN $6 = 1 THEN $7 ELSE description END \
         WHERE merchant_id = $1 AND endpoint_key = $2 AND deleted_at IS NULL RETURNING id";
    let id: Option<i64> = sqlx::query_scalar(sql)
        .bind(merchant_id)
        .bind(endpoint_key)
        .bind(changes.url.as_deref())
        .bind(changes.events.as_ref().map(|e| i64::from(e.is_none())))
        .bind(changes.enabled.map(i64::from))
        .bind(i64::from(changes.description.is_some()))
        .bind(changes.description.clone().flatten())
        .fetch_optional(&mut **tx)
        .await?;
    let Some(id) = id else {
        return Ok(None);
    };
    if let Some(events) = &changes.events {
        set_filter(tx, id, events.as_deref().unwrap_or_default()).await?;
    }
    let rows = sqlx::query(&by_key_sql())
        .bind(merchant_id)
        .bind(endpoint_key)
        .fetch_all(&mut **tx)
        .await?;
    Ok(with_filters(&mut **tx, rows).await?.pop())
}

/// Replaces the signing secret of the merchant's endpoint `endpoint_key` with `secret_sealed`;
/// the one it replaces still signs until `previous_until`. Returns whether there was such an
/// endpoint.
pub async fn rotate_secret(
    store: &Store,
    merchant_id: i64,
    endpoint_key: &str,
    secret_sealed: &str,
    previous_until: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, \
         previous_secret_until = $4, secret_sealed = $3 \
         WHERE merchant_id = $1 AND endpoint_key = $2 AND deleted_at IS NULL",
    )
    .bind(merchant_id)
    .bind(endpoint_key)
    .bind(secret_sealed)
    .bind(to_micros(previous_until))
    .execute(store.writer())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Deletes the merchant's endpoint `endpoint_key`: it is no longer found, nothing more is sent
/// to it, and its pending deliveries end `Undeliverable`. Returns whether there was one.
pub async fn delete(
    tx: &mut Tx,
    merchant_id: i64,
    endpoint_key: &str,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let id: Option<i64> = sqlx::query_scalar(
        "UPDATE webhook_endpoints SET deleted_at = $3, enabled = 0 \
         WHERE merchant_id = $1 AND endpoint_key = $2 AND deleted_at IS NULL RETURNING id",
    )
    .bind(merchant_id)
    .bind(endpoint_key)
    .bind(to_micros(now))
    .fetch_optional(&mut **tx)
    .await?;
    let Some(id) = id else {
        return Ok(false);
    };
    sqlx::query(
        "UPDATE endpoint_deliveries SET status = 'Undeliverable', next_attempt_at = NULL \
         WHERE endpoint_id = $1 AND status = 'Pending'",
    )
    .bind(id)
    .execute(&mut **tx)
    .await?;
    Ok(true)
}

/// What one batch of attempts says of an endpoint's health.
#[derive(Debug, Clone, Copy)]
pub struct Health {
    /// The endpoint.
    pub endpoint_id: i64,
    /// Whether any attempt of the batch succeeded.
    pub succeeded: bool,
    /// The earliest failed attempt of the batch (merchant time), if any failed.
    pub first_failure: Option<DateTime<Utc>>,
    /// The latest failed attempt of the batch (merchant time), if any failed.
    pub last_failure: Option<DateTime<Utc>>,
}

/// An endpoint just disabled for failing.
#[derive(Debug, Clone)]
pub struct Disabled {
    /// Owning merchant.
    pub merchant_id: i64,
    /// Public id.
    pub endpoint_key: String,
    /// Its URL.
    pub url: String,
    /// When its failures began (merchant time).
    pub failing_since: DateTime<Utc>,
    /// When it was disabled: the failure that made five days (merchant time).
    pub disabled_at: DateTime<Utc>,
}

/// Records what a batch of attempts says of each endpoint's health: a success ends its failure
/// streak; a failure starts one, or disables an endpoint whose streak began `gives_up` (a rule
/// of the domain, given the streak's start and the failure) long before. Returns the endpoints
/// disabled now.
pub async fn record_health(
    tx: &mut Tx,
    health: &[Health],
    gives_up: impl Fn(DateTime<Utc>, DateTime<Utc>) -> bool,
) -> Result<Vec<Disabled>, sqlx::Error> {
    let healthy: Vec<i64> = health
        .iter()
        .filter(|h| h.succeeded)
        .map(|h| h.endpoint_id)
        .collect();
    if !healthy.is_empty() {
        let sql = format!(
            "UPDATE webhook_endpoints SET failing_since = NULL \
             WHERE id IN (SELECT column1 FROM (VALUES {}) AS v)",
            super::placeholders(healthy.len(), 1, 1)
        );
        let sql = super::for_backend(sql, super::Backend::of(tx));
        let mut query = sqlx::query(&sql);
        for id in &healthy {
            query = query.bind(*id);
        }
        query.execute(&mut **tx).await?;
    }
    let mut disabled = Vec::new();
    for h in health.iter().filter(|h| !h.succeeded) {
        let (Some(first), Some(last)) = (h.first_failure, h.last_failure) else {
            continue;
        };
        let row: Option<(i64, String, String, i64, i64)> = sqlx::query_as(
            "UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2) \
             WHERE id = $1 AND enabled = 1 \
             RETURNING merchant_id, endpoint_key, url, failing_since, id",
        )
        .bind(h.endpoint_id)
        .bind(to_micros(first))
        .fetch_optional(&mut **tx)
        .await?;
        let Some((merchant_id, endpoint_key, url, since, id)) = row else {
            continue;
        };
        let failing_since = from_micros(since);
        if gives_up(failing_since, last) {
            sqlx::query("UPDATE webhook_endpoints SET enabled = 0, disabled_at = $2 WHERE id = $1")
                .bind(id)
                .bind(to_micros(last))
                .execute(&mut **tx)
                .await?;
            disabled.push(Disabled {
                merchant_id,
                endpoint_key,
                url,
                failing_since,
                disabled_at: last,
            });
        }
    }
    Ok(disabled)
}
