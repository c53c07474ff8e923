//! `stripe_events`: the ids of the events Stripe sent to each connected account's webhook URL,
//! so that each is handled once however often Stripe sends it.

use chrono::{DateTime, Utc};
use sqlx::{Any, Executor};

use super::to_micros;

/// Records event `event_id` of account `processor_id`: whether this is its first arrival.
pub async fn first_arrival<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    processor_id: i64,
    event_id: &str,
    at: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO stripe_events (processor_id, event_id, received_at) VALUES ($1, $2, $3) \
         ON CONFLICT (processor_id, event_id) DO NOTHING",
    )
    .bind(processor_id)
    .bind(event_id)
    .bind(to_micros(at))
    .execute(executor)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Whether event `event_id` of account `processor_id` was handled before.
pub async fn handled<'c, E: Executor<'c, Database = Any>>(
    executor: E,
    processor_id: i64,
    event_id: &str,
) -> Result<bool, sqlx::Error> {
    let found: Option<i32> =
        sqlx::query_scalar("SELECT 1 FROM stripe_events WHERE processor_id = $1 AND event_id = $2")
            .bind(processor_id)
            .bind(event_id)
            .fetch_optional(executor)
            .await?;
    Ok(found.is_some())
}
