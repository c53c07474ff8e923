//! The engine's claims of due work: memberships whose next action is due, locked so that
//! several processes share the work without doing it twice.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::{decode, Membership, COLUMNS, FROM};
use crate::store::{to_micros, Backend, Tx};

/// When the earliest action of the merchant's memberships that is due at `until` falls,
/// claimable or not (its row locked by another transaction, or a charge of it in flight);
/// `None` when nothing is due.
pub async fn earliest_due<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    merchant_id: i64,
    until: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT next_action_at FROM memberships WHERE merchant_id = $1 \
         AND next_action_at IS NOT NULL AND next_action_at <= $2 \
         ORDER BY next_action_at LIMIT 1",
    )
    .bind(merchant_id)
    .bind(to_micros(until))
    .fetch_optional(executor)
    .await?;
    Ok(found.map(crate::store::from_micros))
}

/// The claims' condition that the membership has no charge attempt in flight: its next action
/// waits until the processor answered (one attempt in flight per membership, see
/// [`crate::store::charges`]).
const NOTHING_IN_FLIGHT: &str = "NOT EXISTS (SELECT 1 FROM charges c \
     WHERE c.membership_id = m.id AND c.status = 'Pending')";

/// The claims' condition on the membership's merchant: `merchant_id` alone (bound at
/// `parameter`), or with `None` (bound as 0) every merchant on real time (no test clock).
fn merchant_scope(merchant_id: Option<i64>, parameter: &str) -> String {
    match merchant_id {
        Some(_) => format!("m.merchant_id = {parameter}"),
        None => format!(
            "{parameter} = 0 AND m.merchant_id NOT IN (SELECT t.merchant_id FROM test_clocks t)"
        ),
    }
}

/// The claims' lock: on PostgreSQL the claimed rows are locked and rows locked by another
/// process skipped, so several processes share the work; SQLite serialises writers instead.
fn skip_locked(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => " FOR UPDATE OF m SKIP LOCKED",
        Backend::Sqlite => "",
    }
}

/// Claims the membership whose next action is earliest and due at `until`: of one merchant, or
/// (with `None`) of every merchant that runs on real time (no test clock). On PostgreSQL the row
/// is locked and rows locked by another process are skipped, so several `recur` processes share
/// the work without waiting on each other.
pub async fn claim_due(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: Option<i64>,
    until: DateTime<Utc>,
) -> Result<Option<Membership>, sqlx::Error> {
    let (scope, lock) = (merchant_scope(merchant_id, "$2"), skip_locked(backend));
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE m.next_action_at IS NOT NULL AND m.next_action_at <= $1 \
         AND {scope} AND {NOTHING_IN_FLIGHT} ORDER BY m.next_action_at, m.id LIMIT 1{lock}"
    );
    let row = sqlx::query(&sql)
        .bind(to_micros(until))
        .bind(merchant_id.unwrap_or(0))
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// Claims up to `limit` Active memberships whose period ended by `until` and whose `endDate`
/// has not come: the renewals the engine runs in batches. Of one merchant, or (with `None`) of
/// every merchant on real time, like [`claim_due`]; locked and skipping rows locked elsewhere on
/// PostgreSQL. The test-clock exclusion is a `NOT IN` filter rather than an anti-join so that
/// PostgreSQL reads the batch in `memberships_due` order even when most memberships are due at
/// once, instead of sorting them all for every batch.
pub async fn claim_due_renewals(
    tx: &mut Tx,
    backend: Backend,
    merchant_id: Option<i64>,
    until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Membership>, sqlx::Error> {
    let (scope, lock) = (merchant_scope(merchant_id, "$3"), skip_locked(backend));
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE m.next_action_at IS NOT NULL AND m.next_action_at <= $1 \
         AND m.status = 'Active' AND (m.end_date IS NULL OR m.end_date > $1) \
         AND {scope} AND {NOTHING_IN_FLIGHT} ORDER BY m.next_action_at, m.id LIMIT $2{lock}"
    );
    let rows = sqlx::query(&sql)
        .bind(to_micros(until))
        .bind(limit)
        .bind(merchant_id.unwrap_or(0))
        .fetch_all(&mut **tx)
        .await?;
    rows.iter().map(decode).collect()
}
